import CImageCodecs
import Foundation

/// The decoding steps of `AVIFCoder` over libavif: parse, the limits checked before any pixel memory, the first
/// frame (a still image, or a sequence's poster) converted to RGBA8 with its geometry applied, the colour
/// description, and for a sequence the `AnimatedImage` that decodes the other frames on demand.
struct AVIFImageDecoding {
    let lib: LibAVIF
    let options: ImageDecodingOptions

    func decode(_ data: Data) throws -> DecodedImage {
        do {
            return try decodeAsIs(data)
        } catch let refusal as ImageDecodingError where AVIFCoder.libheifMayTry(refusal) {
            // libavif 0.11 refuses sequences with an audio (or other non-picture) track; without them it reads the
            // pictures, as 1.x does.
            guard let pictures = AVIFForeignTracks.hidden(in: data) else { throw refusal }
            do {
                return try decodeAsIs(pictures)
            } catch let second as ImageDecodingError where AVIFCoder.libheifMayTry(second) {
                throw refusal
            }
        }
    }

    private func decodeAsIs(_ data: Data) throws -> DecodedImage {
        try data.withUnsafeBytes { bytes in
            let file: AVIFFile
            do {
                file = try AVIFFile(lib: lib, bytes: bytes, owner: nil, maximumFrames: options.maximumFrameCount)
            } catch {
                throw Self.decodingError(error, bytes: bytes, options: options)
            }
            let animates = file.frameCount > 1 && !options.decodeFirstFrameOnly
            if animates { try options.checkFrameCount(file.frameCount) }
            let info = file.info
            let coded = (width: Int(info.coded_width), height: Int(info.coded_height))
            // The coded image is what libavif and dav1d allocate: it is checked (and reserved) rather than the
            // smaller displayed one, together with the decoder's own planes.
            let decoderBytes = Self.decoderBytes(info, sequence: animates)
            let canvas = max(1, coded.width * coded.height * 4)
            try options.checkDimensions(width: coded.width, height: coded.height,
                                        workingCanvases: 1 + (decoderBytes + canvas - 1) / canvas)
            guard file.width > 0, file.height > 0 else { throw ImageDecodingError.zeroPixels }
            file.setPixelLimit(options.maximumPixelCount)
            let poster: [UInt8]
            do {
                try file.decodeFrame(0)
                poster = try file.rgba()
            } catch {
                throw Self.decodingError(error, bytes: bytes, options: options)
            }
            var animation: AnimatedImage?
            var loopCount = 0
            if animates {
                let track = AVIFColourTrack.find(in: bytes)
                loopCount = track?.plays ?? 0
                let frames = AVIFSequenceFrames(lib: lib, bytes: AVIFBytes(data), file: file, loopCount: loopCount,
                                                durations: track?.durations(frameCount: file.frameCount),
                                                maximumFrames: options.maximumFrameCount,
                                                pixelLimit: options.maximumPixelCount, decoderBytes: decoderBytes)
                animation = AnimatedImage(source: frames, budget: options.decodingBudget)
            }
            var image = DecodedImage(width: file.width, height: file.height, pixels: poster, format: .avif,
                                     animation: animation, loopCount: loopCount)
            Self.tagColor(&image, file)
            return image
        }
    }

    /// The colr ICC profile, or else the nclx code points, as the HEIF coder records them.
    static func tagColor(_ image: inout DecodedImage, _ file: AVIFFile) {
        if let icc = file.iccProfile() {
            image.iccProfile = icc
            image.colorState = .awaitingConversion
            return
        }
        HEIFCoder.tag(&image, with: NCLXColor(primaries: Int(file.info.color_primaries),
                                              transfer: Int(file.info.transfer_characteristics)))
    }

    /// Bytes libavif and dav1d hold while decoding: the YUV(A) pictures (for a sequence, the eight AV1 reference
    /// slots, the frame being decoded and the one handed out; for a still image, the picture and libavif's copy
    /// of a grid), plus the coded RGBA frame the geometry (clap, irot, imir) is applied from.
    static func decoderBytes(_ info: cic_avif_info, sequence: Bool) -> Int {
        let pixels = Int(info.coded_width) * Int(info.coded_height)
        var bytes = Int(clamping: info.picture_bytes) * (sequence ? 10 : 2)
        let identity = info.orientation == 1 && info.crop_width == info.coded_width && info.crop_height == info.coded_height
        if !identity { bytes += pixels * 4 }
        return bytes
    }

    /// The decoding error for a libavif failure: a file that ends inside a box (or that libavif calls truncated)
    /// is `.truncated`; libavif's frame-count limit is `.tooManyFrames`, its pixel limit (16384² while parsing,
    /// before ours applies) `.tooLarge`; anything else is `.corrupt` with
    /// libavif's message (which `AVIFCoder` may hand to libheif). Errors that are already `ImageDecodingError`
    /// pass through.
    static func decodingError(_ error: any Error, bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) -> any Error {
        guard let failure = error as? AVIFFailure else { return error }
        if failure.isTruncation || HEIFCoder.endsInsideABox(bytes) { return ImageDecodingError.truncated }
        if failure.exceededFrameLimit { return ImageDecodingError.tooManyFrames(limit: max(1, options.maximumFrameCount)) }
        if let size = failure.refusedSize { return ImageDecodingError.tooLarge(width: size.width, height: size.height) }
        return ImageDecodingError.corrupt("libavif: \(failure.message)")
    }
}

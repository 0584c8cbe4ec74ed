import Foundation

/// The decoding steps shared by `WebPCoder.decode` and `WebPIncrementalDecoder`, so both reach the same
/// result (and the same errors) for the same bytes.
struct WebPImageDecoding {
    let lib: LibWebP
    let options: ImageDecodingOptions

    /// Whether these first bytes declare an animation (VP8X with the animation flag); false for a
    /// prefix too short to tell. 21 bytes are enough.
    static func declaresAnimation(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 21 && WebPContainer.fourCC(bytes, 12) == "VP8X" && bytes[20] & WebPContainer.animationFlag != 0
    }

    /// Decodes a whole file: a still image through WebPDecodeRGBAInto, an animation frame by frame.
    func decode(_ bytes: UnsafeRawBufferPointer) throws -> DecodedImage {
        guard bytes.count >= 12 else { throw ImageDecodingError.truncated }
        guard WebPContainer.fourCC(bytes, 0) == "RIFF", WebPContainer.fourCC(bytes, 8) == "WEBP" else {
            throw ImageDecodingError.corrupt("not a RIFF/WEBP file")
        }
        if Self.declaresAnimation(bytes) {
            return try decodeAnimation(try WebPContainer(bytes), bytes)
        }
        return try decodeStill(bytes)
    }

    // MARK: - Still images

    private func decodeStill(_ bytes: UnsafeRawBufferPointer) throws -> DecodedImage {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw ImageDecodingError.truncated }
        var width: Int32 = 0, height: Int32 = 0
        if lib.getInfo(base, bytes.count, &width, &height) != 0 {
            try options.checkDimensions(width: Int(width), height: Int(height))
            let w = Int(width), h = Int(height)
            var decoded = false
            // Decoded straight into the image's own storage.
            let pixels = [UInt8](unsafeUninitializedCapacity: w * h * 4) { buffer, count in
                decoded = lib.decodeRGBAInto(base, bytes.count, buffer.baseAddress, buffer.count, Int32(w * 4)) != nil
                if !decoded { buffer.initialize(repeating: 0) }
                count = buffer.count
            }
            if decoded {
                return Self.tagColor(DecodedImage(width: w, height: h, pixels: pixels, format: .webp, orientation: orientation(bytes)), bytes)
            }
        }
        // The one-shot call only says "failed": run the incremental decoder over the same bytes to tell a
        // truncated file (rows so far are returned) from a corrupt one.
        guard let incremental = LibWebPIncremental(lib) else { throw ImageDecodingError.corrupt("libwebp could not allocate a decoder") }
        incremental.append(bytes)
        return try finish(incremental, bytes)
    }

    /// The final result of an incremental decoder that has seen every byte: the image, a partial image
    /// for a truncated file, or the error.
    func finish(_ incremental: LibWebPIncremental, _ bytes: UnsafeRawBufferPointer) throws -> DecodedImage {
        switch incremental.status {
        case .ok:
            guard let image = incremental.image(requireComplete: true) else {
                throw ImageDecodingError.corrupt("libwebp reported success without pixels")
            }
            return Self.tagColor(DecodedImage(width: image.width, height: image.height, pixels: image.pixels, format: .webp,
                                              orientation: orientation(bytes)), bytes)
        case .suspended, .notEnoughData:
            guard let partial = incremental.image() else { throw ImageDecodingError.truncated }
            return Self.tagColor(DecodedImage(width: partial.width, height: partial.height, pixels: partial.pixels, format: .webp,
                                              orientation: orientation(bytes), isIncomplete: true), bytes)
        case .outOfMemory:
            throw ImageDecodingError.corrupt("libwebp ran out of memory")
        case .unsupportedFeature:
            throw ImageDecodingError.corrupt("libwebp: unsupported WebP feature")
        case .invalidParam, .bitstreamError, .userAbort:
            throw ImageDecodingError.corrupt("libwebp: invalid WebP bitstream")
        }
    }

    /// `image` with the ICCP chunk's profile, when the file (an extended, VP8X one) has one.
    static func tagColor(_ image: DecodedImage, _ bytes: UnsafeRawBufferPointer) -> DecodedImage {
        guard let container = try? WebPContainer(bytes), let range = container.iccProfile, !range.isEmpty else { return image }
        var tagged = image
        tagged.iccProfile = Data(UnsafeRawBufferPointer(rebasing: bytes[range]))
        tagged.colorState = .awaitingConversion
        return tagged
    }

    /// EXIF orientation from the EXIF chunk of an extended (VP8X) file; `.up` without one.
    func orientation(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation {
        guard let container = try? WebPContainer(bytes), let exif = container.exif else { return .up }
        return EXIFOrientation.parse(UnsafeRawBufferPointer(rebasing: bytes[exif])) ?? .up
    }

    // MARK: - Animations

    /// Decodes every complete ANMF frame (only the first with `decodeFirstFrameOnly`) and composites it.
    /// A file cut short yields the frames that arrived, marked incomplete.
    func decodeAnimation(_ container: WebPContainer, _ bytes: UnsafeRawBufferPointer) throws -> DecodedImage {
        let canvasWidth = container.canvasWidth, canvasHeight = container.canvasHeight
        try options.checkDimensions(width: canvasWidth, height: canvasHeight)
        let selected = options.decodeFirstFrameOnly ? Array(container.frames.prefix(1)) : container.frames
        guard !selected.isEmpty else {
            if container.isTruncated { throw ImageDecodingError.truncated }
            throw ImageDecodingError.corrupt("animated WebP without frames")
        }
        // Every frame is a full canvas in memory, so all of them together count against the pixel limit.
        let (total, overflow) = (canvasWidth * canvasHeight).multipliedReportingOverflow(by: selected.count)
        if overflow || total > options.maximumPixelCount {
            throw ImageDecodingError.tooLarge(width: canvasWidth, height: canvasHeight)
        }

        var compositor = WebPAnimationCompositor(canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        var frames: [ImageFrame] = []
        frames.reserveCapacity(selected.count)
        for (index, frame) in selected.enumerated() {
            let stream = try WebPContainer.bitstream(of: frame, in: bytes)
            let file = WebPContainer.standaloneFile(for: stream, in: bytes)
            var width: Int32 = 0, height: Int32 = 0
            guard file.withUnsafeBufferPointer({ lib.getInfo($0.baseAddress, $0.count, &width, &height) }) != 0 else {
                throw ImageDecodingError.corrupt("animation frame \(index) has no valid header")
            }
            let w = Int(width), h = Int(height)
            guard w > 0, h > 0, frame.x + w <= canvasWidth, frame.y + h <= canvasHeight else {
                throw ImageDecodingError.corrupt("animation frame \(index) (\(w)x\(h) at \(frame.x),\(frame.y)) outside the canvas")
            }
            let placement = WebPAnimationCompositor.Placement(
                x: frame.x, y: frame.y, width: w, height: h, hasAlpha: stream.hasAlpha,
                blends: frame.blends, disposesToBackground: frame.disposesToBackground)
            // libwebp decodes the frame straight into its rectangle of the canvas, as WebPAnimDecoder does.
            let canvas = try compositor.add(at: placement) { origin, available, stride in
                let result = file.withUnsafeBufferPointer { lib.decodeRGBAInto($0.baseAddress, $0.count, origin, available, Int32(stride)) }
                guard result != nil else { throw ImageDecodingError.corrupt("animation frame \(index) could not be decoded") }
            }
            frames.append(ImageFrame(pixels: canvas, duration: Self.duration(milliseconds: frame.durationMs)))
        }
        let orientation = container.exif.flatMap { EXIFOrientation.parse(UnsafeRawBufferPointer(rebasing: bytes[$0])) } ?? .up
        let first = frames[0].pixels
        return Self.tagColor(DecodedImage(
            width: canvasWidth, height: canvasHeight, pixels: first, format: .webp, orientation: orientation,
            frames: options.decodeFirstFrameOnly ? [] : frames, loopCount: container.loopCount,
            isIncomplete: container.isTruncated && !options.decodeFirstFrameOnly), bytes)
    }

    /// Seconds for a stored duration, with the browser rule `ImageFrame` documents (under 20 ms → 100 ms).
    static func duration(milliseconds: Int) -> TimeInterval {
        milliseconds < 20 ? 0.1 : Double(milliseconds) / 1000
    }
}

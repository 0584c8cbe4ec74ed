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

    /// Decodes a whole file: a still image through WebPDecodeRGBAInto, an animation's first frame (the others
    /// on demand).
    func decode(_ data: Data) throws -> DecodedImage {
        try data.withUnsafeBytes { bytes in
            guard bytes.count >= 12 else { throw ImageDecodingError.truncated }
            guard WebPContainer.fourCC(bytes, 0) == "RIFF", WebPContainer.fourCC(bytes, 8) == "WEBP" else {
                throw ImageDecodingError.corrupt("not a RIFF/WEBP file")
            }
            if Self.declaresAnimation(bytes) {
                return try decodeAnimation(try WebPContainer(bytes, maximumFrames: options.maximumFrameCount), data)
            }
            return try decodeStill(bytes)
        }
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

    /// Indexes every complete ANMF frame and composites the first one (the poster); the others are composited
    /// on demand by the image's `animation`. A file cut short yields the frames that arrived, marked incomplete.
    func decodeAnimation(_ container: WebPContainer, _ data: Data) throws -> DecodedImage {
        let canvasWidth = container.canvasWidth, canvasHeight = container.canvasHeight
        // The canvas handed out and the disposed previous one.
        try options.checkDimensions(width: canvasWidth, height: canvasHeight, workingCanvases: 2)
        let selected = options.decodeFirstFrameOnly ? Array(container.frames.prefix(1)) : container.frames
        guard !selected.isEmpty else {
            if container.isTruncated { throw ImageDecodingError.truncated }
            throw ImageDecodingError.corrupt("animated WebP without frames")
        }
        try options.checkFrameCount(selected.count)
        let frames = try WebPAnimationFrames(lib: lib, data: data, container: container, frames: selected)
        guard let poster = try frames.makeCompositor(startingAt: 0).advance(output: true) else {
            throw ImageDecodingError.corrupt("animation frame 0 could not be decoded")
        }
        let animation = frames.frameCount > 1 ? AnimatedImage(source: frames, budget: options.decodingBudget) : nil
        return data.withUnsafeBytes { bytes in
            let orientation = container.exif.flatMap { EXIFOrientation.parse(UnsafeRawBufferPointer(rebasing: bytes[$0])) } ?? .up
            return Self.tagColor(DecodedImage(
                width: canvasWidth, height: canvasHeight, pixels: poster, format: .webp, orientation: orientation,
                animation: animation, loopCount: container.loopCount,
                isIncomplete: container.isTruncated && !options.decodeFirstFrameOnly), bytes)
        }
    }

    /// Seconds for a stored duration, with the browser rule `ImageFrame` documents (under 20 ms → 100 ms).
    static func duration(milliseconds: Int) -> TimeInterval {
        milliseconds < 20 ? 0.1 : Double(milliseconds) / 1000
    }
}

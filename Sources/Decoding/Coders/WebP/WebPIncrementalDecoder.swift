import Foundation

/// Decodes WebP while it downloads.
///
/// A still image goes through libwebp's incremental decoder: the header is checked against the pixel limit
/// first, then each `append` passes only the new bytes to WebPIAppend, and `currentImage()` shows the rows
/// decoded so far. An animation is kept until the last byte and then decoded like `WebPCoder.decode`;
/// meanwhile `currentImage()` shows its first frame once that frame has fully arrived.
final class WebPIncrementalDecoder: IncrementalImageDecoder {
    private enum Mode {
        /// Too few bytes to tell still from animated, or to read the still image's size.
        case undetermined
        case still(LibWebPIncremental)
        case animated
    }

    private let soname: String
    private let options: ImageDecodingOptions
    /// Every byte so far: the EXIF chunk follows the pixels, and animations are decoded at the end.
    private var buffer = Data()
    private var mode = Mode.undetermined
    private var finalImage: DecodedImage?
    private var failure: (any Error)?
    private var animationPreview: DecodedImage?

    init(soname: String, options: ImageDecodingOptions) {
        self.soname = soname
        self.options = options
    }

    func append(_ data: Data, isFinal: Bool) throws {
        if let failure { throw failure }
        guard finalImage == nil else { return }
        do {
            try feed(data, isFinal: isFinal)
        } catch {
            failure = error
            throw error
        }
    }

    private func feed(_ data: Data, isFinal: Bool) throws {
        let lib = try LibWebP.loadForDecoding(soname)
        let decoding = WebPImageDecoding(lib: lib, options: options)
        let previousCount = buffer.count
        buffer.append(data)

        if case .undetermined = mode {
            mode = try determineMode(lib, isFinal: isFinal)
            if case .still(let incremental) = mode {
                // The decoder starts now: give it everything buffered so far, the new bytes included.
                buffer.withUnsafeBytes { _ = incremental.append($0) }
                try checkStatus(incremental, decoding)
            }
        } else if case .still(let incremental) = mode {
            buffer.withUnsafeBytes { _ = incremental.append(UnsafeRawBufferPointer(rebasing: $0[previousCount...])) }
            try checkStatus(incremental, decoding)
        }
        guard isFinal else { return }
        switch mode {
        case .still(let incremental): finalImage = try buffer.withUnsafeBytes { try decoding.finish(incremental, $0) }
        case .animated, .undetermined: finalImage = try decoding.decode(buffer)
        }
        animationPreview = nil
    }

    /// Still or animated, once the header says; a still image's size is checked before its decoder exists.
    private func determineMode(_ lib: LibWebP, isFinal: Bool) throws -> Mode {
        try buffer.withUnsafeBytes { bytes -> Mode in
            if bytes.count >= 12 {
                guard WebPContainer.fourCC(bytes, 0) == "RIFF", WebPContainer.fourCC(bytes, 8) == "WEBP" else {
                    throw ImageDecodingError.corrupt("not a RIFF/WEBP file")
                }
            }
            if WebPImageDecoding.declaresAnimation(bytes) { return .animated }
            // At the end, whatever is still undetermined is decoded in one go (same path as `decode`).
            if isFinal || bytes.count < 21 { return .undetermined }
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .undetermined }
            var width: Int32 = 0, height: Int32 = 0
            guard lib.getInfo(base, bytes.count, &width, &height) != 0 else { return .undetermined }
            try options.checkDimensions(width: Int(width), height: Int(height))
            guard let incremental = LibWebPIncremental(lib) else {
                throw ImageDecodingError.corrupt("libwebp could not allocate a decoder")
            }
            return .still(incremental)
        }
    }

    /// A bitstream error is final whatever follows (libwebp decodes sequentially), so it is reported at
    /// once, with the error `decode` of the whole file gives.
    private func checkStatus(_ incremental: LibWebPIncremental, _ decoding: WebPImageDecoding) throws {
        switch incremental.status {
        case .ok, .suspended, .notEnoughData:
            return
        case .outOfMemory, .invalidParam, .bitstreamError, .unsupportedFeature, .userAbort:
            _ = try buffer.withUnsafeBytes { try decoding.finish(incremental, $0) }
        }
    }

    func currentImage() -> DecodedImage? {
        if let finalImage { return finalImage }
        guard failure == nil else { return nil }
        switch mode {
        case .undetermined:
            return nil
        case .still(let incremental):
            guard let partial = incremental.image() else { return nil }
            return buffer.withUnsafeBytes { bytes in
                WebPImageDecoding.tagColor(DecodedImage(width: partial.width, height: partial.height, pixels: partial.pixels,
                                                        format: .webp, isIncomplete: true), bytes)
            }
        case .animated:
            return previewFirstFrame()
        }
    }

    /// The first animation frame, decoded once it has fully arrived (rendered on demand, then kept).
    private func previewFirstFrame() -> DecodedImage? {
        if let animationPreview { return animationPreview }
        guard let lib = try? LibWebP.load(soname).get() else { return nil }
        var firstOnly = options
        firstOnly.decodeFirstFrameOnly = true
        let bytes = buffer
        guard let container = bytes.withUnsafeBytes({ try? WebPContainer($0) }), !container.frames.isEmpty else { return nil }
        let preview = try? WebPImageDecoding(lib: lib, options: firstOnly).decodeAnimation(container, bytes)
        animationPreview = preview.map { image in
            var partial = image
            partial.isIncomplete = true
            return partial
        }
        return animationPreview
    }
}

extension DecodedImage {
    /// The part of the image inside `rect` (clipped to the image; SDWebImage's `SDImageCroppingTransformer`).
    /// Throws `.emptyCrop` when `rect` does not overlap the image. Every animation frame is cropped.
    public func cropped(to rect: PixelRect) throws(ImageProcessingError) -> DecodedImage {
        _ = try validatedBufferSize()
        guard rect.width > 0, rect.height > 0, let clipped = rect.clipped(width: width, height: height) else {
            throw .emptyCrop
        }
        return croppedUnchecked(clipped)
    }

    /// A centred `width`×`height` crop; sides larger than the image keep the image's side.
    public func croppedToCenter(width cropWidth: Int, height cropHeight: Int) throws(ImageProcessingError) -> DecodedImage {
        guard cropWidth > 0, cropHeight > 0 else { throw .invalidSize(width: cropWidth, height: cropHeight) }
        _ = try validatedBufferSize()
        let w = min(width, cropWidth), h = min(height, cropHeight)
        return croppedUnchecked(PixelRect(x: (width - w) / 2, y: (height - h) / 2, width: w, height: h))
    }

    /// The largest centred crop whose width ÷ height is `aspectRatio` (for example 1 for a square, 16/9).
    public func cropped(toAspectRatio aspectRatio: Double) throws(ImageProcessingError) -> DecodedImage {
        guard aspectRatio.isFinite, aspectRatio > 0 else { throw .invalidParameter("aspect ratio \(aspectRatio)") }
        _ = try validatedBufferSize()
        let current = Double(width) / Double(height)
        if current > aspectRatio {
            return try croppedToCenter(width: max(1, Int((Double(height) * aspectRatio).rounded())), height: height)
        }
        return try croppedToCenter(width: width, height: max(1, Int((Double(width) / aspectRatio).rounded())))
    }

    /// Copies the rows of `rect`, which must lie inside the image.
    func croppedUnchecked(_ rect: PixelRect) -> DecodedImage {
        if rect == PixelRect(x: 0, y: 0, width: width, height: height) { return self }
        let srcStride = width * 4, rowBytes = rect.width * 4
        return mappingFrames(width: rect.width, height: rect.height) { src in
            [UInt8](unsafeUninitializedCapacity: rowBytes * rect.height) { dst, initialized in
                src.withUnsafeBufferPointer { s in
                    guard let input = s.baseAddress, let output = dst.baseAddress else { return }
                    for y in 0..<rect.height {
                        (output + y * rowBytes).initialize(
                            from: input + (rect.y + y) * srcStride + rect.x * 4, count: rowBytes)
                    }
                }
                initialized = rowBytes * rect.height
            }
        }
    }
}

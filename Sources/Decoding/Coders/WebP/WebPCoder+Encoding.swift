import Foundation

extension WebPCoder: ConfigurableImageEncoder {
    /// WebP only. Claimed even without libwebp, so `encode` can say what to install.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .webp
    }

    /// Lossy WebP at `quality` (0...1), alpha kept, orientation written as the pixels' own (no EXIF).
    public func encode(_ image: DecodedImage, format: ImageFormat, quality: Double) throws -> Data {
        try encode(image, options: ImageEncodingOptions(format: format, quality: quality))
    }

    /// Lossy (`quality`) or lossless WebP through libwebp's encoder; no metadata chunks. Throws
    /// `.libraryUnavailable` ("install libwebp7") when libwebp.so.7 cannot be loaded.
    public func encode(_ image: DecodedImage, options: ImageEncodingOptions) throws -> Data {
        guard options.format == .webp else { throw ImageEncodingError.unsupportedFormat(options.format) }
        let prepared = try options.prepared(image, flatten: false)
        return try WebPEncoder.encode(prepared, lossless: options.lossless, quality: options.qualityPercent,
                                      soname: soname)
    }

    /// Why WebP encoding is unavailable (libwebp missing, or built without its encoder), or nil.
    public var encoderUnavailableReason: String? {
        LibWebPEncoder.unavailableReason(soname)
    }
}

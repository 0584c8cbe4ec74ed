import Foundation

extension ImageCodersManager {
    /// Encodes `image` with every option `options` sets (progressive JPEG, chroma subsampling, PNG level,
    /// lossless WebP, ...), through the newest coder that writes `options.format`. Metadata is stripped and,
    /// by default, the orientation applied to the pixels. Throws `ImageEncodingError`.
    public func encode(_ image: DecodedImage, options: ImageEncodingOptions) throws -> Data {
        guard let coder = coders.reversed().first(where: { $0.canEncode(options.format) }) else {
            throw ImageEncodingError.unsupportedFormat(options.format)
        }
        if let configurable = coder as? any ConfigurableImageEncoder {
            return try configurable.encode(image, options: options)
        }
        let prepared = try options.prepared(image, flatten: false)
        return try coder.encode(prepared, format: options.format, quality: options.quality)
    }
}

extension ImageEncodingError {
    /// The options API's error for a failure of the shared encoder code, which reports `ImageDecodingError`
    /// for the older `encode(_:format:quality:)` contract.
    static func from(_ error: ImageDecodingError) -> ImageEncodingError {
        switch error {
        case .zeroPixels: return .invalidImage("zero width or height")
        case .tooLarge(let w, let h): return .invalidImage("\(w)x\(h) is too large for the format")
        case .corrupt(let why): return .failed(why)
        default: return .failed(error.description)
        }
    }
}

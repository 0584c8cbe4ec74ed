import Foundation

extension DecodedImage {
    /// The image as a file of `format`: PNG, JPEG and WebP with the built-in coders (AVIF where a registered
    /// coder writes it), through `ImageCodersManager.shared` with `ImageEncodingOptions(format:quality:)`'s
    /// defaults: metadata stripped, the orientation applied to the pixels, an animation written as its first
    /// frame. `quality` 0...1 for lossy formats. For the format's own knobs (progressive JPEG, chroma
    /// subsampling, PNG level, lossless WebP) use `ImageCodersManager.encode(_:options:)`.
    ///
    /// Throws `ImageEncodingError` (`.unsupportedFormat` when no coder writes `format`).
    public func encoded(as format: ImageFormat, quality: Double = 0.9) throws -> Data {
        try ImageCodersManager.shared.encode(self, options: ImageEncodingOptions(format: format, quality: quality))
    }
}

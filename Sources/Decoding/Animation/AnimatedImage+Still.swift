import Foundation

extension AnimatedImage {
    /// Frame `index` as a still image: its pixels are `frame(at:)`'s (composited, and processed as every frame
    /// is: colour conversion, scaling, transformers), `width`×`height`, in the animation's format, with no
    /// frames of its own. Orientation and scale are the owning image's to apply (`DecodedImage.orientation`):
    /// the still reports `.up` and scale 1.
    ///
    /// Throws `ImageDecodingError.frameIndexOutOfRange` for an index out of range, and what `frame(at:)` throws.
    ///
    /// ```swift
    /// let still = try image.animation?.image(at: 25)        // frame 25 of a GIF
    /// let png = try still?.encoded(as: .png)
    /// ```
    public func image(at index: Int) throws -> DecodedImage {
        let pixels = try frame(at: index)
        return DecodedImage(width: width, height: height, pixels: pixels, format: format)
    }
}

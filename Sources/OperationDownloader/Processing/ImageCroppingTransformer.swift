import Decoding
import Foundation

/// Crops to a rectangle, a centred size or a centred aspect ratio (SDWebImage's `SDImageCroppingTransformer`).
///
/// Keys: `crop(rect:10,20,100x50)`, `crop(center:100x100)`, `crop(aspect:1.5)`.
public struct ImageCroppingTransformer: ImageTransformer {
    /// What to keep.
    public enum Region: Sendable, Hashable {
        /// This rectangle, clipped to the image (throws `.emptyCrop` when they do not overlap).
        case rect(PixelRect)
        /// A centred `width`×`height` crop (sides larger than the image keep the image's side).
        case center(width: Int, height: Int)
        /// The largest centred crop with this width ÷ height.
        case aspectRatio(Double)
    }

    public var region: Region

    public init(_ region: Region) {
        self.region = region
    }

    public var key: String {
        switch region {
        case .rect(let rect): return "crop(rect:\(rect))"
        case .center(let w, let h): return "crop(center:\(w)x\(h))"
        case .aspectRatio(let ratio): return "crop(aspect:\(ratio))"
        }
    }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        switch region {
        case .rect(let rect): return try image.cropped(to: rect)
        case .center(let w, let h): return try image.croppedToCenter(width: w, height: h)
        case .aspectRatio(let ratio): return try image.cropped(toAspectRatio: ratio)
        }
    }
}

import Decoding
import Foundation

/// Rounded corners or a circle, with antialiased (partially transparent) edges (SDWebImage's
/// `SDImageRoundCornerTransformer`; Nuke's `ImageProcessors.RoundedCorners` and `.Circle`).
///
/// Keys: `roundCorners(12.0,15)` (radius in pixels, corner mask: 1 top-left, 2 top-right, 4 bottom-left,
/// 8 bottom-right) and `circle`. Output keeps alpha: encode as PNG or WebP to keep the transparency.
public struct ImageRoundCornerTransformer: ImageTransformer {
    public enum Shape: Sendable, Hashable {
        /// These corners rounded with a radius in pixels (capped at half the shorter side).
        case corners(radius: Double, corners: ImageCorners)
        /// The centred square crop, made a circle.
        case circle
    }

    public var shape: Shape

    public init(radius: Double, corners: ImageCorners = .all) {
        shape = .corners(radius: radius, corners: corners)
    }

    public init(shape: Shape) {
        self.shape = shape
    }

    /// A circle: the centred square crop with a radius of half its side.
    public static var circle: ImageRoundCornerTransformer { ImageRoundCornerTransformer(shape: .circle) }

    public var key: String {
        switch shape {
        case .corners(let radius, let corners): return "roundCorners(\(radius),\(corners.rawValue))"
        case .circle: return "circle"
        }
    }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        switch shape {
        case .corners(let radius, let corners): return try image.roundingCorners(radius: radius, corners: corners)
        case .circle: return try image.circleCropped()
        }
    }
}

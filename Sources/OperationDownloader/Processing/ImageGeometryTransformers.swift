import Decoding
import Foundation

/// Mirrors the pixels (SDWebImage's `SDImageFlippingTransformer`). Keys: `flip(h)`, `flip(v)`, `flip(hv)`.
public struct ImageFlippingTransformer: ImageTransformer {
    public var horizontal: Bool
    public var vertical: Bool

    public init(horizontal: Bool, vertical: Bool) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    public var key: String { "flip(\(horizontal ? "h" : "")\(vertical ? "v" : ""))" }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        try image.flipped(horizontally: horizontal, vertically: vertical)
    }
}

/// Turns the pixels clockwise by multiples of 90° (SDWebImage's `SDImageRotationTransformer` for right
/// angles). Key: `rotate(90)` (normalised to 0, 90, 180 or 270).
public struct ImageRotationTransformer: ImageTransformer {
    public var quarterTurns: Int

    public init(quarterTurns: Int) {
        self.quarterTurns = quarterTurns
    }

    public var key: String { "rotate(\(((quarterTurns % 4) + 4) % 4 * 90))" }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        try image.rotated(quarterTurns: quarterTurns)
    }
}

/// Applies the EXIF orientation to the pixels and resets it to `.up`, so the bitmap shows the right way
/// round wherever it goes (a cache, an encoder, a renderer that ignores orientation). Key: `orientUp`.
public struct ImageOrientationTransformer: ImageTransformer {
    public init() {}

    public var key: String { "orientUp" }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        try image.orientedUp()
    }
}

/// A rectangle in whole pixels: origin at the top-left corner, y grows downwards.
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The overlap with a `width`×`height` image, or nil when there is none.
    func clipped(width imageWidth: Int, height imageHeight: Int) -> PixelRect? {
        let (right, o1) = x.addingReportingOverflow(width)
        let (bottom, o2) = y.addingReportingOverflow(height)
        guard !o1, !o2 else { return nil }
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(imageWidth, right), y1 = min(imageHeight, bottom)
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// "x,y,wxh", as used in transformer keys.
    public var description: String { "\(x),\(y),\(width)x\(height)" }
}

/// Which corners `roundingCorners` rounds.
public struct ImageCorners: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let topLeft = ImageCorners(rawValue: 1 << 0)
    public static let topRight = ImageCorners(rawValue: 1 << 1)
    public static let bottomLeft = ImageCorners(rawValue: 1 << 2)
    public static let bottomRight = ImageCorners(rawValue: 1 << 3)
    public static let all: ImageCorners = [.topLeft, .topRight, .bottomLeft, .bottomRight]
}

/// How `resized(to:mode:)` maps the image onto the target box.
public enum ImageResizeMode: String, Sendable, Hashable, CaseIterable {
    /// The whole image inside the box, aspect ratio kept: one side equals the box, the other is smaller or
    /// equal (UIKit's aspectFit, SDWebImage's `.aspectFit`, vipsthumbnail's default).
    case fit
    /// The box covered, aspect ratio kept, the overflow cropped away equally on both sides: the result is
    /// exactly the box (aspectFill + centre crop; Nuke's `Resize(crop: true)`, `vipsthumbnail --smartcrop none`).
    case fill
    /// Exactly the box, aspect ratio ignored (stretched).
    case exact
}

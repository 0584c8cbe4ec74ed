import Foundation

/// How to decode: target size, scale, frame selection and the decompression-bomb guard.
public struct ImageDecodingOptions: Sendable, Equatable {
    /// The default pixel limit: 100 megapixels (400 MB of RGBA).
    public static let defaultMaximumPixelCount = 100_000_000
    /// SDWebImage's iOS default for `scaleDownLargeImages`: 60 MB of RGBA.
    public static let defaultScaleDownLimitBytes = 60 * 1024 * 1024

    /// Points-to-pixels scale written into the result (1, 2, 3).
    public var scaleFactor: Double
    /// Fit the result inside this many pixels, aspect ratio kept, never enlarged. `nil` or zero: full size.
    public var thumbnailPixelSize: CGSize?
    /// Shrink (aspect kept) until `width * height * 4` fits in this many bytes. `nil`: no limit.
    public var scaleDownLimitBytes: Int?
    /// Decode only the first frame of an animation.
    public var decodeFirstFrameOnly: Bool
    /// Reject images whose header declares more pixels than this (width × height, canvas for animations).
    public var maximumPixelCount: Int
    /// Convert embedded colour spaces to sRGB (the default), or keep the decoded pixels and the profile.
    public var colorManagement: ImageColorManagement
    /// Shrink-on-load only (libvips' term), for callers that resize with a better filter afterwards: the
    /// coder reduces cheaply where it can (libjpeg's DCT scaling) and stops, so the result is at least the
    /// size `thumbnailPixelSize` asks for but not filtered to it. `nil` (the default): the exact size.
    public var shrinkOnLoad: ShrinkOnLoad?
    /// Set by `ImageCodersManager` only: a coder that can convert rows to sRGB as it decodes them (the JPEG
    /// coder) does so and reports them converted. Coders called directly keep returning pixels as decoded.
    var coderConvertsColor = false

    /// How much a shrink-on-load decode may reduce: what the result must still cover.
    public enum ShrinkOnLoad: Sendable, Equatable {
        /// At least the size that fitting into `thumbnailPixelSize` gives (aspect ratio kept).
        case fit
        /// At least the box itself in both directions (aspect ratio kept): for a later fill or crop.
        case cover
    }

    public init(
        scaleFactor: Double = 1,
        thumbnailPixelSize: CGSize? = nil,
        scaleDownLimitBytes: Int? = nil,
        decodeFirstFrameOnly: Bool = false,
        maximumPixelCount: Int = ImageDecodingOptions.defaultMaximumPixelCount,
        colorManagement: ImageColorManagement = .convertToSRGB,
        shrinkOnLoad: ShrinkOnLoad? = nil
    ) {
        self.colorManagement = colorManagement
        self.scaleFactor = scaleFactor
        self.thumbnailPixelSize = thumbnailPixelSize
        self.scaleDownLimitBytes = scaleDownLimitBytes
        self.decodeFirstFrameOnly = decodeFirstFrameOnly
        self.maximumPixelCount = maximumPixelCount
        self.shrinkOnLoad = shrinkOnLoad
    }

    /// These options for a coder called by `ImageCodersManager` (`coderConvertsColor`).
    var lettingCoderConvertColor: ImageDecodingOptions {
        var options = self
        options.coderConvertsColor = true
        return options
    }

    /// Throws `.zeroPixels` or `.tooLarge` for a header's dimensions. Coders call this as soon as the
    /// header is parsed, before allocating any pixel memory.
    public func checkDimensions(width: Int, height: Int) throws {
        guard width > 0, height > 0 else { throw ImageDecodingError.zeroPixels }
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || count > maximumPixelCount {
            throw ImageDecodingError.tooLarge(width: width, height: height)
        }
    }
}

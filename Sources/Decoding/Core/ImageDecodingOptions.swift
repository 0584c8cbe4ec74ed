import Foundation

/// How to decode: target size, scale, frame selection and the decompression-bomb guard.
public struct ImageDecodingOptions: Sendable, Equatable {
    /// The default pixel limit: 100 megapixels (400 MB of RGBA).
    public static let defaultMaximumPixelCount = 100_000_000
    /// SDWebImage's iOS default for `scaleDownLargeImages`: 60 MB of RGBA.
    public static let defaultScaleDownLimitBytes = 60 * 1024 * 1024
    /// The default frame-count limit: APNG's 10,000, applied to every animated format.
    public static let defaultMaximumFrameCount = 10_000

    /// Points-to-pixels scale written into the result (1, 2, 3).
    public var scaleFactor: Double
    /// Fit the result inside this many pixels, aspect ratio kept, never enlarged. `nil` or zero: full size.
    public var thumbnailPixelSize: CGSize?
    /// Shrink (aspect kept) until `width * height * 4` fits in this many bytes. `nil`: no limit.
    public var scaleDownLimitBytes: Int?
    /// Decode only the first frame of an animation (`frameCount` is then 1 and `animation` nil).
    public var decodeFirstFrameOnly: Bool
    /// Reject images whose header declares more pixels than this: width × height of ONE canvas (an animation's
    /// canvas, or one frame's extent). Frames are not added up: they are composited on demand.
    public var maximumPixelCount: Int
    /// Reject animations with more frames than this (`ImageDecodingError.tooManyFrames`).
    public var maximumFrameCount: Int
    /// Composite every frame of an animation up front into `DecodedImage.frames` (SDWebImage's
    /// `SDWebImagePreloadAllFrames`), when all of them fit in the decode memory budget at once; otherwise, and
    /// by default, frames are composited on demand through `DecodedImage.animation`.
    public var preloadAllFrames: Bool
    /// The memory budget the decode's pixel buffers are reserved against (`.shared` by default).
    public var decodingBudget: ImageDecodingBudget
    /// Ends a wait for the decode memory budget with `ImageDecodingError.cancelled` when cancelled.
    public var cancellation: ImageDecodingCancellation?
    /// Convert embedded colour spaces to sRGB (the default), or keep the decoded pixels and the profile.
    public var colorManagement: ImageColorManagement
    /// Shrink-on-load only (libvips' term), for callers that resize with a better filter afterwards: the
    /// coder reduces cheaply where it can (libjpeg's DCT scaling) and stops, so the result is at least the
    /// size `thumbnailPixelSize` asks for but not filtered to it. `nil` (the default): the exact size.
    public var shrinkOnLoad: ShrinkOnLoad?
    /// The decode's claim on the budget, set by `ImageCodersManager` for the coder it calls.
    var budgetScope = DecodeBudgetScopeSlot()
    /// Told, once, the bytes of the image a decode run by `ImageCodersManager` will return (its width × height
    /// × 4), when the coder reads the header and before any pixel memory exists. The downloader's memory cache
    /// makes room for the image then rather than after it is decoded (Docs/Decoding.md, "Memory").
    package var willAllocateImage = DecodeAllocationHook()
    /// Told how long a decode run by `ImageCodersManager` waited for room in `decodingBudget` (only when it
    /// waited): the downloader's `od_decode_budget_wait_seconds`.
    package var budgetWaited = DecodeBudgetWaitHook()
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
        shrinkOnLoad: ShrinkOnLoad? = nil,
        maximumFrameCount: Int = ImageDecodingOptions.defaultMaximumFrameCount,
        preloadAllFrames: Bool = false,
        decodingBudget: ImageDecodingBudget = .shared,
        cancellation: ImageDecodingCancellation? = nil
    ) {
        self.maximumFrameCount = maximumFrameCount
        self.preloadAllFrames = preloadAllFrames
        self.decodingBudget = decodingBudget
        self.cancellation = cancellation
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
    /// header is parsed, before allocating any pixel memory. Inside a decode run by `ImageCodersManager` it
    /// also reserves the decode's pixel memory against `decodingBudget` (waiting for room, or throwing
    /// `.exceedsDecodingBudget` for a canvas larger than the whole budget).
    public func checkDimensions(width: Int, height: Int) throws {
        try checkDimensions(width: width, height: height, workingCanvases: 1)
    }

    /// `checkDimensions` for a decode that holds `workingCanvases` canvases of this size at its peak (an
    /// animation's compositing canvas beside the frame it hands out).
    func checkDimensions(width: Int, height: Int, workingCanvases: Int) throws {
        try checkPixelLimit(width: width, height: height)
        try budgetScope.scope?.claim(width: width, height: height, workingCanvases: workingCanvases, options: self)
    }

    /// The pixel limit alone, for extents that allocate nothing (a GIF frame reaching outside its screen).
    func checkPixelLimit(width: Int, height: Int) throws {
        guard width > 0, height > 0 else { throw ImageDecodingError.zeroPixels }
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || count > maximumPixelCount {
            throw ImageDecodingError.tooLarge(width: width, height: height)
        }
    }

    /// Throws `.tooManyFrames` once an animation's frames exceed `maximumFrameCount`.
    func checkFrameCount(_ count: Int) throws {
        if count > max(1, maximumFrameCount) { throw ImageDecodingError.tooManyFrames(limit: max(1, maximumFrameCount)) }
    }
}

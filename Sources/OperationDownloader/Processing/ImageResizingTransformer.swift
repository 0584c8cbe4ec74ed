import Decoding
import Foundation

/// Resizes into a box: fit, fill (centre crop) or exact (SDWebImage's `SDImageResizingTransformer`, Nuke's
/// `ImageProcessors.Resize`). High-quality, antialiased: Lanczos-3 by default, in premultiplied alpha.
///
/// For downloads, also set `ImageDownloaderContext.thumbnailPixelSize` to about the same box so the decoder
/// shrinks first (libjpeg's DCT scaling) and the filter works on a small image.
///
/// Key: `resize(fit,256x256,lanczos3)`, with `,upscale` when `allowsUpscaling` and `,linear` for linear light.
public struct ImageResizingTransformer: ImageTransformer {
    public var width: Int
    public var height: Int
    public var mode: ImageResizeMode
    public var filter: ResamplingFilter
    /// Whether `.fit` and `.fill` may enlarge a smaller image (`.exact` always reaches the box).
    public var allowsUpscaling: Bool
    /// Filter in linear light instead of on the sRGB-encoded values.
    public var linearLight: Bool

    public init(width: Int, height: Int, mode: ImageResizeMode = .fit, filter: ResamplingFilter = .lanczos3,
                allowsUpscaling: Bool = false, linearLight: Bool = false) {
        self.width = width
        self.height = height
        self.mode = mode
        self.filter = filter
        self.allowsUpscaling = allowsUpscaling
        self.linearLight = linearLight
    }

    public var key: String {
        var key = "resize(\(mode.rawValue),\(width)x\(height),\(filter.rawValue)"
        if allowsUpscaling { key += ",upscale" }
        if linearLight { key += ",linear" }
        return key + ")"
    }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        try image.resized(toWidth: width, height: height, mode: mode, filter: filter,
                          allowsUpscaling: allowsUpscaling, linearLight: linearLight)
    }
}

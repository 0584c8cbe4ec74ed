import Foundation

/// Per-download switches. Bit values are SDWebImage 5's `SDWebImageDownloaderOptions`, so code ported from
/// it keeps its meaning.
public struct ImageDownloaderOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt

    public init(rawValue: UInt) {
        self.rawValue = rawValue
    }

    /// Queue priority `.low`.
    public static let lowPriority = ImageDownloaderOptions(rawValue: 1 << 0)
    /// Deliver partial images (`isIncomplete == true`, `finished == false`) while the bytes arrive.
    public static let progressiveLoad = ImageDownloaderOptions(rawValue: 1 << 1)
    /// Use the HTTP cache (request cache policy `.useProtocolCachePolicy` instead of reloading).
    public static let useURLCache = ImageDownloaderOptions(rawValue: 1 << 2)
    /// With a cached response: when the downloaded data equals the cached data, fail with `.cacheNotModified`.
    public static let ignoreCachedResponse = ImageDownloaderOptions(rawValue: 1 << 3)
    /// Ask the platform for background execution time (UIKit only; no effect on Linux).
    public static let continueInBackground = ImageDownloaderOptions(rawValue: 1 << 4)
    /// Send and store cookies (the session itself never handles cookies).
    public static let handleCookies = ImageDownloaderOptions(rawValue: 1 << 5)
    /// Accept invalid TLS certificates where the platform allows it (Apple only; unavailable on Linux).
    public static let allowInvalidSSLCertificates = ImageDownloaderOptions(rawValue: 1 << 6)
    /// Queue priority `.high`.
    public static let highPriority = ImageDownloaderOptions(rawValue: 1 << 7)
    /// Shrink images larger than `ImageDecodingOptions.defaultScaleDownLimitBytes` of RGBA while decoding.
    public static let scaleDownLargeImages = ImageDownloaderOptions(rawValue: 1 << 8)
    /// Deliver the data only: the completion's image is `nil`.
    public static let avoidDecodeImage = ImageDownloaderOptions(rawValue: 1 << 9)
    /// Decode only the first frame of an animated image.
    public static let decodeFirstFrameOnly = ImageDownloaderOptions(rawValue: 1 << 10)
    /// Decode every frame of an animated image up front (the default here; kept for source compatibility).
    public static let preloadAllFrames = ImageDownloaderOptions(rawValue: 1 << 11)
}

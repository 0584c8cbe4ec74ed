import Foundation
import Decoding

/// Per-request overrides of the downloader's settings. `nil` fields take the downloader's value.
///
/// The downloader hands the operation a context with every field it knows filled in, so custom operation
/// classes (`ImageDownloaderConfiguration.operationClass`) get the whole configuration through one value.
public struct ImageDownloaderContext: Sendable {
    /// Replaces the downloader's request modifier for this request.
    public var requestModifier: (any ImageDownloaderRequestModifier)?
    /// Replaces the downloader's response modifier for this request.
    public var responseModifier: (any ImageDownloaderResponseModifier)?
    /// Replaces the downloader's decryptor for this request.
    public var decryptor: (any ImageDownloaderDecryptor)?
    /// Decode into at most this many pixels (aspect kept).
    public var thumbnailPixelSize: CGSize?
    /// The scale written into the image, instead of the one from "@2x"/"@3x" in the URL.
    public var imageScaleFactor: Double?
    /// Where this caller's progress and completion run (and, for the caller that creates the operation,
    /// its notifications).
    public var callbackQueue: DispatchQueue?
    /// Part of the coalescing and memory-cache key (AFNetworking's "additional identifier"): the same URL
    /// with different identifiers downloads separately (for example, different thumbnail sizes).
    public var cacheIdentifier: String?
    /// The coders to decode with (default `ImageCodersManager.shared`).
    public var codersManager: ImageCodersManager?
    /// Overrides `ImageDownloaderConfiguration.maximumResponseSize`.
    public var maximumResponseSize: Int?
    /// Overrides `ImageDownloaderConfiguration.downloadTimeout` (seconds, whole download).
    public var downloadTimeout: TimeInterval?
    /// Overrides `ImageDownloaderConfiguration.progressiveDecodingInterval`.
    public var progressiveDecodingInterval: TimeInterval?
    /// Overrides `ImageDownloaderConfiguration.maximumPixelCount`.
    public var maximumPixelCount: Int?
    /// Overrides `ImageDownloaderConfiguration.httpCache` (used with `.useURLCache`).
    public var httpCache: HTTPImageCache?
    /// Overrides `ImageDownloaderConfiguration.postsNotifications` (`nil` on an operation made without a
    /// downloader: notifications are posted).
    public var postsNotifications: Bool?
    /// Transforms the decoded image for this caller (resize, crop, ...); its `key` is part of the memory-cache
    /// key. Callers with different transformers still share one network request.
    public var transformer: (any ImageTransformer)?
    /// Overrides `ImageDownloaderConfiguration.retryPolicy` for this request.
    public var retryPolicy: ImageDownloaderRetryPolicy?
    /// Set by the downloader: starts background revalidations for stale-while-revalidate (HTTP cache).
    var httpCacheRevalidator: HTTPCacheRevalidator?

    public init(
        requestModifier: (any ImageDownloaderRequestModifier)? = nil,
        responseModifier: (any ImageDownloaderResponseModifier)? = nil,
        decryptor: (any ImageDownloaderDecryptor)? = nil,
        thumbnailPixelSize: CGSize? = nil,
        imageScaleFactor: Double? = nil,
        callbackQueue: DispatchQueue? = nil,
        cacheIdentifier: String? = nil,
        codersManager: ImageCodersManager? = nil,
        maximumResponseSize: Int? = nil,
        downloadTimeout: TimeInterval? = nil,
        progressiveDecodingInterval: TimeInterval? = nil,
        maximumPixelCount: Int? = nil,
        httpCache: HTTPImageCache? = nil,
        postsNotifications: Bool? = nil,
        transformer: (any ImageTransformer)? = nil,
        retryPolicy: ImageDownloaderRetryPolicy? = nil
    ) {
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.decryptor = decryptor
        self.thumbnailPixelSize = thumbnailPixelSize
        self.imageScaleFactor = imageScaleFactor
        self.callbackQueue = callbackQueue
        self.cacheIdentifier = cacheIdentifier
        self.codersManager = codersManager
        self.maximumResponseSize = maximumResponseSize
        self.downloadTimeout = downloadTimeout
        self.progressiveDecodingInterval = progressiveDecodingInterval
        self.maximumPixelCount = maximumPixelCount
        self.httpCache = httpCache
        self.postsNotifications = postsNotifications
        self.transformer = transformer
        self.retryPolicy = retryPolicy
    }
}

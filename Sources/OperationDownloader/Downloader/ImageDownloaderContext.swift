import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Per-request overrides of the downloader's settings. `nil` fields take the downloader's value.
///
/// The downloader hands the operation a context with every field it knows filled in, so custom operation
/// classes (`ImageDownloaderConfiguration.operationClass`) get the whole configuration through one value.
/// Which fields are the transfer's and which the caller's: Docs/Options.md, "Per transfer or per caller"; where
/// the defaults live: Downloader/ResolvedOptions.swift.
public struct ImageDownloaderContext: Sendable {
    /// Replaces the downloader's request modifier for this request.
    public var requestModifier: (any ImageDownloaderRequestModifier)?
    /// Replaces the downloader's response modifier for this request.
    public var responseModifier: (any ImageDownloaderResponseModifier)?
    /// Replaces the downloader's decryptor for this request.
    public var decryptor: (any ImageDownloaderDecryptor)?
    /// Decode into at most this many pixels (aspect kept). Part of this caller's variant: callers of one URL
    /// with different sizes share the transfer, each gets its own decode and memory-cache entry.
    public var thumbnailPixelSize: CGSize?
    /// The scale written into the image, instead of the one from "@2x"/"@3x" in the URL (part of the variant).
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
    /// Overrides `ImageDownloaderConfiguration.downloadTimeout` (the idle timeout, seconds; 0 or less: 15 s).
    public var downloadTimeout: TimeInterval?
    /// Overrides `ImageDownloaderConfiguration.maximumDownloadDuration` (the cap on one whole transfer).
    public var maximumDownloadDuration: TimeInterval?
    /// Overrides `ImageDownloaderConfiguration.allowsIncompleteImages` for this caller.
    public var allowsIncompleteImages: Bool?
    /// Overrides `ImageDownloaderConfiguration.progressiveDecodingInterval`.
    public var progressiveDecodingInterval: TimeInterval?
    /// Overrides `ImageDownloaderConfiguration.maximumPixelCount`.
    public var maximumPixelCount: Int?
    /// Overrides `ImageDownloaderConfiguration.httpCache` (used with `.useURLCache`).
    public var httpCache: HTTPImageCache?
    /// Overrides `ImageDownloaderConfiguration.postsNotifications` (`nil` on an operation made without a
    /// downloader: notifications are posted).
    public var postsNotifications: Bool?
    /// Transforms the decoded image for this caller (resize, crop, ...), partial images included; its `key` is
    /// part of the memory-cache key. Callers with different transformers still share one network request; a
    /// transformer that throws fails this caller alone with `.badImageData(.transformerFailed(key:error:))`, the
    /// error it threw inside, and nothing is cached.
    public var transformer: (any ImageTransformer)?
    /// Overrides `ImageDownloaderConfiguration.retryPolicy` for this request.
    public var retryPolicy: ImageDownloaderRetryPolicy?

    /// Not public: the downloader's transport, timer, memory-cache writer and revalidator, for the operations it
    /// makes (ResolvedOptions.swift). The one internal field: the public `init(request:session:options:context:)`
    /// is the only way into an operation subclass, so the downloader's plumbing travels beside the overrides.
    var plumbing: DownloadPlumbing?

    /// A context with the given overrides; every field left nil takes the downloader's value (or, for an operation
    /// made without a downloader, the package's default: Docs/Options.md).
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
        retryPolicy: ImageDownloaderRetryPolicy? = nil,
        maximumDownloadDuration: TimeInterval? = nil,
        allowsIncompleteImages: Bool? = nil
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
        self.maximumDownloadDuration = maximumDownloadDuration
        self.allowsIncompleteImages = allowsIncompleteImages
    }
}

extension ImageDownloaderContext {
    /// A context that decodes into at most `maxPixelSize` × `maxPixelSize` pixels (aspect ratio kept, never
    /// enlarged; JPEGs shrink while decoding): `try await downloader.image(for: url, context: .thumbnail(maxPixelSize: 256))`.
    /// The value is an ordinary context: set more fields on it (a `transformer`, a `retryPolicy`) as needed.
    public static func thumbnail(maxPixelSize: Int) -> ImageDownloaderContext {
        ImageDownloaderContext(thumbnailPixelSize: CGSize(width: maxPixelSize, height: maxPixelSize))
    }
}

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
    /// Every field, in one immutable object that copies share: a download copies its context about a dozen
    /// times, and each copy of eighteen fields (four of them existentials) retained every one of them
    /// (Docs/Transports.md). A change makes a new object (`update`).
    private var storage: ContextStorage

    /// Replaces the downloader's request modifier for this request.
    public var requestModifier: (any ImageDownloaderRequestModifier)? {
        get { storage.fields.requestModifier }
        set { update { $0.requestModifier = newValue } }
    }
    /// Replaces the downloader's response modifier for this request.
    public var responseModifier: (any ImageDownloaderResponseModifier)? {
        get { storage.fields.responseModifier }
        set { update { $0.responseModifier = newValue } }
    }
    /// Replaces the downloader's decryptor for this request.
    public var decryptor: (any ImageDownloaderDecryptor)? {
        get { storage.fields.decryptor }
        set { update { $0.decryptor = newValue } }
    }
    /// Decode into at most this many pixels (aspect kept). Part of this caller's variant: callers of one URL
    /// with different sizes share the transfer, each gets its own decode and memory-cache entry.
    public var thumbnailPixelSize: CGSize? {
        get { storage.fields.thumbnailPixelSize }
        set { update { $0.thumbnailPixelSize = newValue } }
    }
    /// The scale written into the image, instead of the one from "@2x"/"@3x" in the URL (part of the variant).
    public var imageScaleFactor: Double? {
        get { storage.fields.imageScaleFactor }
        set { update { $0.imageScaleFactor = newValue } }
    }
    /// Where this caller's progress and completion run (and, for the caller that creates the operation,
    /// its notifications).
    public var callbackQueue: DispatchQueue? {
        get { storage.fields.callbackQueue }
        set { update { $0.callbackQueue = newValue } }
    }
    /// Part of the coalescing and memory-cache key (AFNetworking's "additional identifier"): the same URL
    /// with different identifiers downloads separately (for example, different thumbnail sizes).
    public var cacheIdentifier: String? {
        get { storage.fields.cacheIdentifier }
        set { update { $0.cacheIdentifier = newValue } }
    }
    /// The coders to decode with (default `ImageCodersManager.shared`).
    public var codersManager: ImageCodersManager? {
        get { storage.fields.codersManager }
        set { update { $0.codersManager = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.maximumResponseSize`.
    public var maximumResponseSize: Int? {
        get { storage.fields.maximumResponseSize }
        set { update { $0.maximumResponseSize = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.downloadTimeout` (the idle timeout, seconds; 0 or less: 15 s).
    public var downloadTimeout: TimeInterval? {
        get { storage.fields.downloadTimeout }
        set { update { $0.downloadTimeout = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.maximumDownloadDuration` (the cap on one whole transfer).
    public var maximumDownloadDuration: TimeInterval? {
        get { storage.fields.maximumDownloadDuration }
        set { update { $0.maximumDownloadDuration = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.allowsIncompleteImages` for this caller.
    public var allowsIncompleteImages: Bool? {
        get { storage.fields.allowsIncompleteImages }
        set { update { $0.allowsIncompleteImages = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.progressiveDecodingInterval`.
    public var progressiveDecodingInterval: TimeInterval? {
        get { storage.fields.progressiveDecodingInterval }
        set { update { $0.progressiveDecodingInterval = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.maximumPixelCount`.
    public var maximumPixelCount: Int? {
        get { storage.fields.maximumPixelCount }
        set { update { $0.maximumPixelCount = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.httpCache` (used with `.useURLCache`).
    public var httpCache: HTTPImageCache? {
        get { storage.fields.httpCache }
        set { update { $0.httpCache = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.postsNotifications` (`nil` on an operation made without a
    /// downloader: notifications are posted).
    public var postsNotifications: Bool? {
        get { storage.fields.postsNotifications }
        set { update { $0.postsNotifications = newValue } }
    }
    /// Transforms the decoded image for this caller (resize, crop, ...), partial images included; its `key` is
    /// part of the memory-cache key. Callers with different transformers still share one network request; a
    /// transformer that throws fails this caller alone with `.badImageData(.transformerFailed(key:error:))`, the
    /// error it threw inside, and nothing is cached.
    public var transformer: (any ImageTransformer)? {
        get { storage.fields.transformer }
        set { update { $0.transformer = newValue } }
    }
    /// Overrides `ImageDownloaderConfiguration.retryPolicy` for this request.
    public var retryPolicy: ImageDownloaderRetryPolicy? {
        get { storage.fields.retryPolicy }
        set { update { $0.retryPolicy = newValue } }
    }
    /// The caller's W3C trace context (`traceparent`, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`):
    /// every request of the download carries it with a span id of its own, retries, resumes and redirects
    /// included. An invalid value is ignored (a warning goes to the log hook). Callers that join a download in
    /// flight share its requests, which carry the first caller's trace; theirs are linked to its span
    /// (Docs/Observability.md).
    public var traceParent: String? {
        get { storage.fields.traceParent }
        set { update { $0.traceParent = newValue } }
    }
    /// The W3C `tracestate` sent beside `traceParent` (ignored without it).
    public var traceState: String? {
        get { storage.fields.traceState }
        set { update { $0.traceState = newValue } }
    }
    /// Not public: the downloader's transport, timer, memory-cache writer and revalidator, for the operations it
    /// makes (ResolvedOptions.swift). The one internal field: the public `init(request:session:options:context:)`
    /// is the only way into an operation subclass, so the downloader's plumbing travels beside the overrides.
    var plumbing: DownloadPlumbing? {
        get { storage.fields.plumbing }
        set { update { $0.plumbing = newValue } }
    }

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
        allowsIncompleteImages: Bool? = nil,
        traceParent: String? = nil,
        traceState: String? = nil
    ) {
        var fields = ContextFields()
        fields.requestModifier = requestModifier
        fields.responseModifier = responseModifier
        fields.decryptor = decryptor
        fields.thumbnailPixelSize = thumbnailPixelSize
        fields.imageScaleFactor = imageScaleFactor
        fields.callbackQueue = callbackQueue
        fields.cacheIdentifier = cacheIdentifier
        fields.codersManager = codersManager
        fields.maximumResponseSize = maximumResponseSize
        fields.downloadTimeout = downloadTimeout
        fields.progressiveDecodingInterval = progressiveDecodingInterval
        fields.maximumPixelCount = maximumPixelCount
        fields.httpCache = httpCache
        fields.postsNotifications = postsNotifications
        fields.transformer = transformer
        fields.retryPolicy = retryPolicy
        fields.maximumDownloadDuration = maximumDownloadDuration
        fields.allowsIncompleteImages = allowsIncompleteImages
        fields.traceParent = traceParent
        fields.traceState = traceState
        storage = ContextStorage(fields)
    }

    /// A context with no overrides, sharing one storage object (the downloader's paths use it where a caller gave none).
    static let empty = ImageDownloaderContext(storage: .empty)

    private init(storage: ContextStorage) {
        self.storage = storage
    }

    /// Changes fields in one step: one new storage object however many fields change (`fill` sets a dozen).
    mutating func update(_ change: (inout ContextFields) -> Void) {
        var fields = storage.fields
        change(&fields)
        storage = ContextStorage(fields)
    }
}

/// The fields of an `ImageDownloaderContext` (documented there).
struct ContextFields: Sendable {
    var requestModifier: (any ImageDownloaderRequestModifier)? = nil
    var responseModifier: (any ImageDownloaderResponseModifier)? = nil
    var decryptor: (any ImageDownloaderDecryptor)? = nil
    var thumbnailPixelSize: CGSize? = nil
    var imageScaleFactor: Double? = nil
    var callbackQueue: DispatchQueue? = nil
    var cacheIdentifier: String? = nil
    var codersManager: ImageCodersManager? = nil
    var maximumResponseSize: Int? = nil
    var downloadTimeout: TimeInterval? = nil
    var maximumDownloadDuration: TimeInterval? = nil
    var allowsIncompleteImages: Bool? = nil
    var progressiveDecodingInterval: TimeInterval? = nil
    var maximumPixelCount: Int? = nil
    var httpCache: HTTPImageCache? = nil
    var postsNotifications: Bool? = nil
    var transformer: (any ImageTransformer)? = nil
    var retryPolicy: ImageDownloaderRetryPolicy? = nil
    var traceParent: String? = nil
    var traceState: String? = nil
    var plumbing: DownloadPlumbing? = nil
}

/// An `ImageDownloaderContext`'s fields, immutable: copies of the context share it.
final class ContextStorage: Sendable {
    static let empty = ContextStorage(ContextFields())

    let fields: ContextFields

    init(_ fields: ContextFields) {
        self.fields = fields
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

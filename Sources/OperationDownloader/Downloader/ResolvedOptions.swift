import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Where a download's settings are decided (Docs/Options.md, "Where the defaults live"): the configuration, the
// caller's context and options become ONE `TransferOptions` per transfer (what the operation runs with) and ONE
// `CallerOptions` per caller (what that caller is answered with). Every default is defined here, in
// `DownloadDefaults`, and nowhere else; the operation and the downloader read the resolved values.

/// Every default of a download: the configuration's initial values, and what an operation made without a
/// downloader (or a context field left nil) runs with.
enum DownloadDefaults {
    /// `downloadTimeout` when none (or 0 or less) is given: the idle timeout, in seconds.
    static let idleTimeout: TimeInterval = 15
    static let maximumResponseSize = 256 * 1024 * 1024
    static let progressiveDecodingInterval: TimeInterval = 0.1
    static let maximumPixelCount = ImageDecodingOptions.defaultMaximumPixelCount
    static let postsNotifications = true
    static let allowsIncompleteImages = false
    static let retryPolicy = ImageDownloaderRetryPolicy.never
    static let metricsServerAddressLimit = 100
    static var codersManager: ImageCodersManager { .shared }
    /// The callback queue of operations made without a downloader (a downloader has its own, made by the same rule:
    /// `ImageDownloader.makeDefaultCallbackQueue`).
    static let callbackQueue = ImageDownloader.makeDefaultCallbackQueue(label: "OperationDownloader.callbacks")

    /// The idle timeout for a `downloadTimeout` value: 0, less, nil or not finite means the default.
    static func idleTimeout(_ seconds: TimeInterval?) -> TimeInterval {
        guard let seconds, seconds.isFinite, seconds > 0 else { return idleTimeout }
        return seconds
    }
}

/// What the downloader gives the operations it makes besides the public settings: its transport and timer, the
/// download's memory-cache writer, and the HTTP cache's background revalidations. Never public: it travels in
/// the one internal field of the context (`ImageDownloaderContext.plumbing`), because the public
/// `init(request:session:options:context:)` is the only way into an operation subclass.
struct DownloadPlumbing: Sendable {
    /// The downloader's transport and timer (one reference, so copies stay cheap).
    let resources: DownloaderResources
    /// Writes this download's images to the downloader's memory cache (nil without one).
    var memoryCache: MemoryCacheWriter?
    /// Starts background revalidations for stale-while-revalidate; set only with `.useURLCache` and a cache.
    let revalidator: HTTPCacheRevalidator?
    /// The request was made by the downloader from a URL and no request modifier changed it, so its
    /// `timeoutInterval` was never assigned (handed on as `TransferRequest.timeoutIntervalIsUnset`).
    var timeoutIntervalIsUnset = false
}

/// One transfer's settings, resolved once when its operation is made (Docs/Options.md, "Per transfer or per
/// caller"): timeouts, limits, the HTTP cache, cookies, certificate checks, modifiers, the decryptor, coders,
/// the retry policy, notifications, and the downloader's plumbing.
struct TransferOptions: Sendable {
    /// No byte for this long fails the transfer.
    let idleTimeout: TimeInterval
    /// The cap on one transfer, or nil.
    let maximumDownloadDuration: TimeInterval?
    let maximumResponseSize: Int
    /// Where notifications go, and the callers' handlers unless they name their own queue.
    let callbackQueue: DispatchQueue
    let progressiveDecodingInterval: TimeInterval
    let codersManager: ImageCodersManager
    let postsNotifications: Bool
    /// The pixel limit of callers' variants that set none.
    let maximumPixelCount: Int
    /// The `allowsIncompleteImages` of callers that set none.
    let allowsIncompleteImages: Bool
    let responseModifier: (any ImageDownloaderResponseModifier)?
    let decryptor: (any ImageDownloaderDecryptor)?
    /// The HTTP cache, with `.useURLCache`; `ignoresCachedResponse`, `handlesCookies` are the options'.
    let httpCache: HTTPImageCache?
    let useURLCache: Bool
    let ignoresCachedResponse: Bool
    let handlesCookies: Bool
    let allowsInvalidCertificates: Bool
    let continuesInBackground: Bool
    /// Whether incremental decoding may run for the callers that ask for partial images (`.progressiveLoad`,
    /// per caller): not with a decryptor (encrypted bytes cannot be decoded as they arrive).
    let mayDecodeIncrementally: Bool
    /// Whether the first bytes are checked for a non-image body (no decryptor hides them). Whatever the first
    /// caller asked: the verdict ends the download early only while every caller decodes, so each caller gets
    /// what it would alone, in any join order.
    var sniffsBody: Bool { decryptor == nil }
    /// The retry policy, or nil when it allows one attempt only: then a failure ends the download without
    /// consulting any retry rule.
    let retryPolicy: ImageDownloaderRetryPolicy?
    /// The downloader's transport and timer, memory cache and revalidator (nil: an operation on its own).
    let plumbing: DownloadPlumbing?

    /// The timer behind the timeouts: the downloader's, or the shared one.
    var deadlineMonitor: DeadlineMonitor { plumbing?.resources.deadlineMonitor ?? .shared }

    /// The settings of a transfer from its operation's options and context: the context the downloader filled
    /// (`ImageDownloaderContext.fill`), or a caller's own for an operation made without a downloader; what
    /// is still nil takes `DownloadDefaults`.
    init(options: ImageDownloaderOptions, context: ImageDownloaderContext) {
        idleTimeout = DownloadDefaults.idleTimeout(context.downloadTimeout)
        let duration = context.maximumDownloadDuration ?? 0
        maximumDownloadDuration = duration.isFinite && duration > 0 ? duration : nil
        maximumResponseSize = context.maximumResponseSize ?? DownloadDefaults.maximumResponseSize
        callbackQueue = context.callbackQueue ?? DownloadDefaults.callbackQueue
        progressiveDecodingInterval = context.progressiveDecodingInterval ?? DownloadDefaults.progressiveDecodingInterval
        codersManager = context.codersManager ?? DownloadDefaults.codersManager
        postsNotifications = context.postsNotifications ?? DownloadDefaults.postsNotifications
        maximumPixelCount = context.maximumPixelCount ?? DownloadDefaults.maximumPixelCount
        allowsIncompleteImages = context.allowsIncompleteImages ?? DownloadDefaults.allowsIncompleteImages
        responseModifier = context.responseModifier
        decryptor = context.decryptor
        httpCache = context.httpCache
        useURLCache = options.contains(.useURLCache)
        ignoresCachedResponse = options.contains(.ignoreCachedResponse)
        handlesCookies = options.contains(.handleCookies)
        allowsInvalidCertificates = options.contains(.allowInvalidSSLCertificates)
        continuesInBackground = options.contains(.continueInBackground)
        mayDecodeIncrementally = context.decryptor == nil
        let policy = context.retryPolicy ?? DownloadDefaults.retryPolicy
        retryPolicy = policy.maximumAttempts > 1 ? policy : nil
        plumbing = context.plumbing
    }

    /// What callers of this transfer get where their own context says nothing.
    var callerDefaults: CallerDefaults {
        CallerDefaults(
            callbackQueue: callbackQueue, allowsIncompleteImages: allowsIncompleteImages,
            maximumPixelCount: maximumPixelCount)
    }
}

/// The per-caller settings a caller's context may leave nil: the downloader's configuration for its callers, the
/// operation's own for callers added to an operation directly.
struct CallerDefaults: Sendable {
    let callbackQueue: DispatchQueue
    let allowsIncompleteImages: Bool
    let maximumPixelCount: Int
}

/// One caller's settings, resolved once when it calls (Docs/Options.md, "Per transfer or per caller"): where its
/// handlers run, its variant of the image, its transformer, partial images, and its memory-cache entry.
struct CallerOptions: Sendable {
    /// Where this caller's progress and completion run.
    let callbackQueue: DispatchQueue
    /// How this caller's image is decoded (its pixel limit filled in) and transformed.
    let variant: ImageVariant
    let transformer: (any ImageTransformer)?
    /// Deliver a truncated image marked `isIncomplete` instead of failing with `.badImageData`.
    let allowsIncompleteImages: Bool
    /// `.progressiveLoad`: only such callers get partial images.
    let wantsPartialImages: Bool
    /// The context's `cacheIdentifier` (part of the coalescing key).
    let cacheIdentifier: String?
    /// The additional identifier of this caller's memory-cache entry (cache identifier and variant).
    let memoryCacheIdentifier: String?

    init(options: ImageDownloaderOptions, context: ImageDownloaderContext, defaults: CallerDefaults) {
        callbackQueue = context.callbackQueue ?? defaults.callbackQueue
        var variant = ImageVariant(options: options, context: context)
        if var decoding = variant.decoding, decoding.maximumPixelCount == nil {
            decoding.maximumPixelCount = defaults.maximumPixelCount
            variant.decoding = decoding
        }
        self.variant = variant
        transformer = context.transformer
        allowsIncompleteImages = context.allowsIncompleteImages ?? defaults.allowsIncompleteImages
        wantsPartialImages = options.contains(.progressiveLoad)
        cacheIdentifier = context.cacheIdentifier
        memoryCacheIdentifier = variant.additionalIdentifier(cacheIdentifier: context.cacheIdentifier)
    }

    /// The caller's context with these settings filled in, for an operation class that reads the context
    /// (`addHandlers(forProgress:completed:options:context:)` of a subclass or another class).
    func filling(_ context: ImageDownloaderContext?) -> ImageDownloaderContext {
        var filled = context ?? .empty
        filled.update { fields in
            fields.callbackQueue = callbackQueue
            fields.allowsIncompleteImages = allowsIncompleteImages
            if fields.maximumPixelCount == nil { fields.maximumPixelCount = variant.decoding?.maximumPixelCount }
        }
        return filled
    }
}

extension ImageDownloaderContext {
    /// Makes this (the first caller's context) the context an operation of a downloader is made with: the
    /// downloader's settings under it, every field filled, and the downloader's plumbing. Any operation class
    /// gets the whole configuration through it (its `init`), and this package's reads it back as `TransferOptions`.
    /// One `update`: a single new storage object for all the fields it sets.
    mutating func fill(
        by configuration: ImageDownloaderConfiguration, callbackQueue: DispatchQueue,
        responseModifier: (any ImageDownloaderResponseModifier)?, decryptor: (any ImageDownloaderDecryptor)?,
        plumbing: DownloadPlumbing
    ) {
        update { fields in
            // `a = a ?? b` rather than `if a == nil`: comparing an Optional existential with nil copies it.
            fields.responseModifier = fields.responseModifier ?? responseModifier
            fields.decryptor = fields.decryptor ?? decryptor
            fields.callbackQueue = fields.callbackQueue ?? callbackQueue
            fields.codersManager = fields.codersManager ?? configuration.codersManager
            fields.maximumResponseSize = fields.maximumResponseSize ?? configuration.maximumResponseSize
            fields.downloadTimeout = fields.downloadTimeout ?? configuration.downloadTimeout
            fields.maximumDownloadDuration = fields.maximumDownloadDuration ?? configuration.maximumDownloadDuration
            fields.retryPolicy = fields.retryPolicy ?? configuration.retryPolicy
            fields.allowsIncompleteImages = fields.allowsIncompleteImages ?? configuration.allowsIncompleteImages
            fields.progressiveDecodingInterval =
                fields.progressiveDecodingInterval ?? configuration.progressiveDecodingInterval
            fields.maximumPixelCount = fields.maximumPixelCount ?? configuration.maximumPixelCount
            fields.httpCache = fields.httpCache ?? configuration.httpCache
            fields.postsNotifications = fields.postsNotifications ?? configuration.postsNotifications
            fields.plumbing = plumbing
        }
    }
}

extension ImageDownloaderConfiguration {
    /// What the callers of a downloader with this configuration get where their context says nothing.
    func callerDefaults(callbackQueue: DispatchQueue) -> CallerDefaults {
        CallerDefaults(
            callbackQueue: callbackQueue, allowsIncompleteImages: allowsIncompleteImages,
            maximumPixelCount: maximumPixelCount)
    }
}

/// The downloader's transport, timer and telemetry, shared by every operation it makes.
final class DownloaderResources: Sendable {
    /// The transport the downloader carries its transfers on.
    let transport: any DownloadTransport
    /// The timer behind the timeouts.
    let deadlineMonitor: DeadlineMonitor
    /// The metrics sink, tracer and log hook (nil when the configuration sets none: Observability/).
    let telemetry: DownloaderTelemetry?
    /// What final decodes reserve their pixel memory against: the process's budget (tests give a downloader one
    /// of its own).
    let decodingBudget: ImageDecodingBudget

    init(
        transport: any DownloadTransport, deadlineMonitor: DeadlineMonitor, telemetry: DownloaderTelemetry? = nil,
        decodingBudget: ImageDecodingBudget = .shared
    ) {
        self.transport = transport
        self.deadlineMonitor = deadlineMonitor
        self.telemetry = telemetry
        self.decodingBudget = decodingBudget
    }
}

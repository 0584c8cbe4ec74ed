import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads and decodes images: one session, one `OperationQueue`, one operation per URL in flight
/// (SDWebImage's `SDWebImageDownloader` with AFNetworking's merged tasks, receipts and memory cache).
///
/// Every `completed` handler runs exactly once with `finished == true` (plus extra `finished == false`
/// calls with partial images for `.progressiveLoad`), on the callback queue, for every outcome: success,
/// HTTP or network error, cancel, invalidation. Two exceptions run synchronously before `downloadImage`
/// returns `nil`: a memory-cache hit, and a request that cannot be made (nil URL, request modifier returning
/// nil, invalidated downloader).
public final class ImageDownloader: @unchecked Sendable {  // `lock` guards the mutable state below
    /// A downloader with the default configuration.
    public static let shared = ImageDownloader()

    /// The queue completions run on when none is configured: the main queue on Apple platforms, a private
    /// serial queue elsewhere (CLI and server programs on Linux rarely spin the main run loop).
    static let platformDefaultCallbackQueue: DispatchQueue = {
        #if canImport(FoundationNetworking)
        return DispatchQueue(label: "OperationDownloader.callbacks")
        #else
        return DispatchQueue.main
        #endif
    }()

    /// The User-Agent sent by default.
    public static let defaultUserAgent: String = {
        #if os(Linux)
        let platform = "Linux"
        #elseif os(macOS)
        let platform = "macOS"
        #elseif os(iOS)
        let platform = "iOS"
        #else
        let platform = "Swift"
        #endif
        return "OperationDownloader/1.0 (\(platform); Swift)"
    }()

    private struct Entry {
        let operation: any ImageDownloaderOperationProtocol
        let cacheOnce: OnceFlag
    }

    private let lock = NSLock()
    private let storedConfiguration: ImageDownloaderConfiguration
    private let session: URLSession
    private let router = SessionRouter()
    private let queue = OperationQueue()
    private let callbackQueue: DispatchQueue
    private var headers: [String: String] = [
        "Accept": "image/*,*/*;q=0.8",
        "User-Agent": ImageDownloader.defaultUserAgent,
    ]
    private var storedRequestModifier: (any ImageDownloaderRequestModifier)?
    private var storedResponseModifier: (any ImageDownloaderResponseModifier)?
    private var storedDecryptor: (any ImageDownloaderDecryptor)?
    private var operations: [String: Entry] = [:]
    private var liveOperations = 0
    private var invalidated = false
    /// Set by `invalidate`: how to end the session once the last operation has finished.
    private var pendingSessionInvalidation: SessionInvalidation?

    private enum SessionInvalidation {
        case cancelTasks, finishTasks
    }

    /// Creates a downloader with its own session and queue; `configuration` is copied.
    public init(configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration()) {
        var configuration = configuration
        configuration.maxConcurrentDownloads = max(1, configuration.maxConcurrentDownloads)
        let sessionConfiguration = (configuration.sessionConfiguration.copy() as? URLSessionConfiguration) ?? .default
        // Linux facts: URLCache entries are served for every policy (the package caches itself), the request's
        // httpShouldHandleCookies is ignored (only the session setting works).
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.timeoutIntervalForRequest = Self.sessionTimeout(configuration.downloadTimeout)
        sessionConfiguration.httpMaximumConnectionsPerHost = max(
            sessionConfiguration.httpMaximumConnectionsPerHost, configuration.maxConcurrentDownloads)
        configuration.sessionConfiguration = sessionConfiguration
        storedConfiguration = configuration

        callbackQueue = configuration.callbackQueue ?? Self.makeDefaultCallbackQueue()
        queue.name = "OperationDownloader.ImageDownloader"
        queue.maxConcurrentOperationCount = configuration.maxConcurrentDownloads
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.name = "OperationDownloader.session-delegate"
        session = URLSession(configuration: sessionConfiguration, delegate: router, delegateQueue: delegateQueue)
    }

    deinit {
        // Not invalidated: cancel everything. Invalidated with operations still running: end the session as
        // `invalidate` asked once they finish (their completion blocks no longer reach this object).
        let how: SessionInvalidation? = lock.withLock { invalidated ? pendingSessionInvalidation : .cancelTasks }
        guard let how else { return }
        let session = self.session
        if how == .cancelTasks { queue.cancelAllOperations() }
        queue.isSuspended = false
        // Nobody can reach this queue any more, so nothing can cancel this barrier.
        queue.addBarrierBlock {
            if how == .cancelTasks { session.invalidateAndCancel() } else { session.finishTasksAndInvalidate() }
        }
    }

    /// Each downloader gets its own serial queue on Linux, so one slow handler does not hold up other downloaders.
    private static func makeDefaultCallbackQueue() -> DispatchQueue {
        #if canImport(FoundationNetworking)
        return DispatchQueue(label: "OperationDownloader.ImageDownloader.callbacks")
        #else
        return DispatchQueue.main
        #endif
    }

    /// URLSession on Linux truncates the timeout to whole seconds (0.5 fails at once): round up, at least 1.
    static func sessionTimeout(_ seconds: TimeInterval) -> TimeInterval {
        guard seconds.isFinite, seconds > 0 else { return 15 }
        return max(1, seconds.rounded(.up))
    }

    // MARK: - Settings

    /// A copy of the configuration in use.
    public var configuration: ImageDownloaderConfiguration {
        var copy = storedConfiguration
        copy.sessionConfiguration = (storedConfiguration.sessionConfiguration.copy() as? URLSessionConfiguration)
            ?? storedConfiguration.sessionConfiguration
        return copy
    }

    /// Pauses starting queued downloads (running ones continue).
    public var isSuspended: Bool {
        get { queue.isSuspended }
        set { queue.isSuspended = newValue }
    }

    /// Operations queued or running.
    public var currentDownloadCount: Int { lock.withLock { liveOperations } }

    /// Applied to every new request unless the context has its own; returning nil fails the download.
    public var requestModifier: (any ImageDownloaderRequestModifier)? {
        get { lock.withLock { storedRequestModifier } }
        set { lock.withLock { storedRequestModifier = newValue } }
    }

    /// Applied to every response unless the context has its own.
    public var responseModifier: (any ImageDownloaderResponseModifier)? {
        get { lock.withLock { storedResponseModifier } }
        set { lock.withLock { storedResponseModifier = newValue } }
    }

    /// Applied to every body before decoding unless the context has its own.
    public var decryptor: (any ImageDownloaderDecryptor)? {
        get { lock.withLock { storedDecryptor } }
        set { lock.withLock { storedDecryptor = newValue } }
    }

    /// Sets (or with nil removes) a header sent with every request. As with `URLRequest.setValue`, a value
    /// the platform refuses as a header value is ignored.
    public func setValue(_ value: String?, forHTTPHeaderField field: String) {
        // Normalised once here by the platform's own `setValue` (corelibs capitalises names and drops invalid
        // values), so requests can take the fields in one assignment.
        var normalised: (field: String, value: String)?
        if let value, let url = URL(string: "http://localhost/") {
            var scratch = URLRequest(url: url)
            scratch.setValue(value, forHTTPHeaderField: field)
            normalised = scratch.allHTTPHeaderFields?.first.map { (field: $0.key, value: $0.value) }
            if normalised == nil { return }
        }
        lock.withLock {
            let existing = headers.keys.first { $0.caseInsensitiveCompare(field) == .orderedSame }
            if let existing { headers[existing] = nil }
            if let normalised { headers[normalised.field] = normalised.value }
        }
    }

    /// A header sent with every request.
    public func value(forHTTPHeaderField field: String) -> String? {
        lock.withLock { headers.first { $0.key.caseInsensitiveCompare(field) == .orderedSame }?.value }
    }

    // MARK: - Downloading

    /// Downloads and decodes `url`. Returns the caller's token, or nil when the completion already ran
    /// synchronously (nil or unsupported URL, memory-cache hit, request modifier returned nil, invalidated).
    @discardableResult
    public func downloadImage(
        _ url: URL?, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil,
        progress: ImageDownloaderProgressHandler? = nil, completed: ImageDownloaderCompletedHandler? = nil
    ) -> ImageDownloadToken? {
        guard let url else {
            completed?(nil, nil, ImageDownloaderError.invalidURL, true)
            return nil
        }
        return download(
            URLRequest(url: url), plain: true, options: options, context: context, progress: progress,
            completed: completed)
    }

    /// Downloads and decodes `request`; its headers win over the downloader's. The memory cache is consulted
    /// only for cache policies that allow cached data (the default `.useProtocolCachePolicy` does).
    @discardableResult
    public func downloadImage(
        with request: URLRequest, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil,
        progress: ImageDownloaderProgressHandler? = nil, completed: ImageDownloaderCompletedHandler? = nil
    ) -> ImageDownloadToken? {
        download(request, plain: false, options: options, context: context, progress: progress, completed: completed)
    }

    /// `plain`: the request is `URLRequest(url:)` made by the URL entry point, so the request to send can be
    /// built afresh instead of copied and mutated (see `prepareRequest`).
    private func download(
        _ request: URLRequest, plain: Bool, options: ImageDownloaderOptions, context: ImageDownloaderContext?,
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?
    ) -> ImageDownloadToken? {
        guard let url = request.url, Self.isSupported(url) else {
            completed?(nil, nil, ImageDownloaderError.invalidURL, true)
            return nil
        }
        let context = context ?? ImageDownloaderContext()
        let identifier = context.cacheIdentifier
        if Self.allowsCachedData(request.cachePolicy), let cache = storedConfiguration.imageCache,
           let image = cache.image(for: request, withAdditionalIdentifier: identifier) {
            completed?(image, nil, nil, true)
            return nil
        }
        let key = Self.coalescingKey(url: url, identifier: identifier)
        let handlers = (progress: progress, completed: wrap(completed, request: request, identifier: identifier))

        // Join an operation in flight if there is one (its handlers are added under the lock, so it cannot
        // finish in between: a finished or cancelled operation refuses new callers and is never reused).
        if let token = lock.withLock({ join(key: key, url: url, options: options, context: context, handlers: handlers) }) {
            return token
        }
        if lock.withLock({ invalidated }) {
            completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
            return nil
        }
        // User code (the request modifier) runs outside the lock.
        guard let prepared = prepareRequest(request, plain: plain, options: options, context: context) else {
            completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
            return nil
        }
        let operation = makeOperation(request: prepared, options: options, context: context)
        let cacheOnce = OnceFlag()
        let outcome: (ImageDownloadToken?, Bool) = lock.withLock {
            if let token = join(key: key, url: url, options: options, context: context, handlers: handlers) {
                return (token, false)
            }
            if invalidated { return (nil, true) }
            guard let callerToken = addHandlers(to: operation, handlers: (handlers.progress, handlers.completed(cacheOnce)), queue: context.callbackQueue) else {
                return (nil, true)
            }
            operations[key] = Entry(operation: operation, cacheOnce: cacheOnce)
            liveOperations += 1
            enqueue(operation, key: key)
            return (ImageDownloadToken(url: url, request: prepared, operation: operation, callerToken: callerToken, coalescingKey: key, downloader: self), false)
        }
        if outcome.1 {
            completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
        }
        return outcome.0
    }

    /// Cancels every queued and running download; each caller gets `.cancelled` once.
    public func cancelAllDownloads() {
        queue.cancelAllOperations()
    }

    /// Retires the downloader. With `cancelPendingOperations`, every queued and running download is cancelled
    /// (each caller gets `.cancelled` once); otherwise they finish normally. New downloads fail with
    /// `.invalidDownloadOperation`. The session is invalidated once the queue has drained, so no task is ever
    /// created on an invalidated session.
    public func invalidate(cancelPendingOperations: Bool) {
        let first: Bool = lock.withLock {
            if invalidated { return false }
            invalidated = true
            return true
        }
        guard first else { return }
        if cancelPendingOperations {
            queue.cancelAllOperations()
            // Cancelled operations finish as soon as they are started, so let them.
            queue.isSuspended = false
        }
        // No barrier block here: a later `cancelAllDownloads()` would cancel it, and corelibs then neither runs
        // it (the session would never be invalidated) nor unlinks it from the operations it waited for (they
        // keep an unretained reference to it and crash when they finish). The last operation to finish
        // invalidates the session instead.
        let invalidateNow: Bool = lock.withLock {
            pendingSessionInvalidation = cancelPendingOperations ? .cancelTasks : .finishTasks
            return liveOperations == 0
        }
        if invalidateNow { invalidateSessionOnce() }
    }

    /// Invalidates the session as `invalidate` asked, once, after the last operation has finished (so no
    /// task is ever created on an invalidated session, which is a fatal error on Linux).
    private func invalidateSessionOnce() {
        let how: SessionInvalidation? = lock.withLock {
            let how = pendingSessionInvalidation
            pendingSessionInvalidation = nil
            return how
        }
        switch how {
        case .cancelTasks: session.invalidateAndCancel()
        case .finishTasks: session.finishTasksAndInvalidate()
        case nil: break
        }
    }

    // MARK: - Internals

    static func isSupported(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        switch scheme {
        case "http", "https": return url.host?.isEmpty == false
        case "data": return true
        default: return false
        }
    }

    static func allowsCachedData(_ policy: URLRequest.CachePolicy) -> Bool {
        switch policy {
        case .useProtocolCachePolicy, .returnCacheDataElseLoad, .returnCacheDataDontLoad: return true
        default: return false
        }
    }

    static func coalescingKey(url: URL, identifier: String?) -> String {
        guard let identifier, !identifier.isEmpty else { return url.absoluteString }
        return url.absoluteString + "\u{1F}" + identifier
    }

    /// The completion wrapper that adds the image to the memory cache once per operation, before the caller
    /// runs (so a request made from the completion already hits the cache).
    private func wrap(
        _ completed: ImageDownloaderCompletedHandler?, request: URLRequest, identifier: String?
    ) -> (OnceFlag) -> ImageDownloaderCompletedHandler? {
        guard let cache = storedConfiguration.imageCache else { return { _ in completed } }
        return { once in
            { image, data, error, finished in
                if finished, error == nil, let image, !image.isIncomplete, once.claim(),
                   cache.shouldCache(image, for: request, withAdditionalIdentifier: identifier) {
                    cache.add(image, for: request, withAdditionalIdentifier: identifier)
                }
                completed?(image, data, error, finished)
            }
        }
    }

    /// Under `lock`: adds a caller to the operation in flight for `key`, raising its priority if needed.
    private func join(
        key: String, url: URL, options: ImageDownloaderOptions, context: ImageDownloaderContext,
        handlers: (progress: ImageDownloaderProgressHandler?, completed: (OnceFlag) -> ImageDownloaderCompletedHandler?)
    ) -> ImageDownloadToken? {
        guard let entry = operations[key], !entry.operation.isFinished, !entry.operation.isCancelled,
              let callerToken = addHandlers(
                to: entry.operation, handlers: (handlers.progress, handlers.completed(entry.cacheOnce)),
                queue: context.callbackQueue)
        else { return nil }
        let wanted = Self.priority(for: options)
        if wanted.rawValue > entry.operation.queuePriority.rawValue { entry.operation.queuePriority = wanted }
        return ImageDownloadToken(
            url: url, request: entry.operation.request, operation: entry.operation, callerToken: callerToken,
            coalescingKey: key, downloader: self)
    }

    private func addHandlers(
        to operation: any ImageDownloaderOperationProtocol,
        handlers: (progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?),
        queue: DispatchQueue?
    ) -> AnyObject? {
        if let own = operation as? ImageDownloaderOperation {
            return own.addHandlers(forProgress: handlers.progress, completed: handlers.completed, queue: queue)
        }
        return operation.addHandlers(forProgress: handlers.progress, completed: handlers.completed)
    }

    static func priority(for options: ImageDownloaderOptions) -> Operation.QueuePriority {
        if options.contains(.highPriority) { return .high }
        if options.contains(.lowPriority) { return .low }
        return .normal
    }

    /// Timeout, cache policy, the downloader's headers (the request's own win), then the request modifier.
    ///
    /// Built with as few `URLRequest` mutations as possible: in corelibs Foundation each one copies the
    /// request when it is shared, and `setValue(_:forHTTPHeaderField:)` costs about 16 k instructions
    /// (callgrind), several times a whole small download's share of the package. The downloader's headers
    /// are kept in the form `setValue` produces (see `setValue(_:forHTTPHeaderField:)`), so one assignment
    /// of the merged fields sends the same bytes.
    private func prepareRequest(
        _ request: URLRequest, plain: Bool, options: ImageDownloaderOptions, context: ImageDownloaderContext
    ) -> URLRequest? {
        let timeout = Self.sessionTimeout(context.downloadTimeout ?? storedConfiguration.downloadTimeout)
        let policy: URLRequest.CachePolicy = options.contains(.useURLCache) ? request.cachePolicy : .reloadIgnoringLocalCacheData
        var prepared: URLRequest
        if plain, let url = request.url {
            prepared = URLRequest(url: url, cachePolicy: policy, timeoutInterval: timeout)
        } else {
            prepared = request
            if prepared.timeoutInterval != timeout { prepared.timeoutInterval = timeout }
            if prepared.cachePolicy != policy { prepared.cachePolicy = policy }
        }
        let (headers, modifier) = lock.withLock { (self.headers, storedRequestModifier) }
        if let merged = Self.merging(headers, into: prepared.allHTTPHeaderFields) {
            prepared.allHTTPHeaderFields = merged
        }
        guard let modifier = context.requestModifier ?? modifier else { return prepared }
        return modifier.modifiedRequest(with: prepared)
    }

    /// The request's header fields plus each of `defaults` the request does not already have (names compared
    /// case-insensitively; the request's own win). nil when nothing is added.
    static func merging(_ defaults: [String: String], into fields: [String: String]?) -> [String: String]? {
        guard !defaults.isEmpty else { return nil }
        guard let fields, !fields.isEmpty else { return defaults }
        let present = Set(fields.keys.map { $0.lowercased() })
        var merged = fields
        for (field, value) in defaults where !present.contains(field.lowercased()) { merged[field] = value }
        return merged.count == fields.count ? nil : merged
    }

    /// Creates the operation (the configured class or `ImageDownloaderOperation`) with the merged context.
    private func makeOperation(
        request: URLRequest, options: ImageDownloaderOptions, context: ImageDownloaderContext
    ) -> any ImageDownloaderOperationProtocol {
        let configuration = storedConfiguration
        var merged = context
        lock.withLock {
            merged.responseModifier = context.responseModifier ?? storedResponseModifier
            merged.decryptor = context.decryptor ?? storedDecryptor
        }
        merged.callbackQueue = context.callbackQueue ?? callbackQueue
        merged.codersManager = context.codersManager ?? configuration.codersManager
        merged.maximumResponseSize = context.maximumResponseSize ?? configuration.maximumResponseSize
        merged.downloadTimeout = context.downloadTimeout ?? configuration.downloadTimeout
        merged.progressiveDecodingInterval = context.progressiveDecodingInterval ?? configuration.progressiveDecodingInterval
        merged.maximumPixelCount = context.maximumPixelCount ?? configuration.maximumPixelCount
        merged.httpCache = context.httpCache ?? configuration.httpCache
        merged.postsNotifications = context.postsNotifications ?? configuration.postsNotifications
        merged.httpCacheRevalidator = .downloader(self)  // [HTTP cache] stale-while-revalidate in the background

        let type = configuration.operationClass ?? ImageDownloaderOperation.self
        let operation = type.init(request: request, session: session, options: options, context: merged)
        operation.credential = configuration.effectiveCredential
        operation.minimumProgressInterval = configuration.minimumProgressInterval
        operation.acceptableStatusCodes = configuration.acceptableStatusCodes
        operation.acceptableContentTypes = configuration.acceptableContentTypes
        operation.queuePriority = Self.priority(for: options)
        return operation
    }

    /// Under `lock`: registers the operation with the router and the queue (LIFO: as a dependency of every
    /// pending operation, so it starts before all of them).
    private func enqueue(_ operation: any ImageDownloaderOperationProtocol, key: String) {
        let router = self.router
        router.register(operation)
        if let own = operation as? ImageDownloaderOperation {
            own.onTaskCreated { [weak router, weak own] task in
                guard let router, let own else { return }
                router.bind(task, to: own)
            }
        }
        let finished: @Sendable (Operation) -> Void = { [weak self] operation in
            // corelibs Foundation: a dependency keeps an UNRETAINED back-reference to each dependent and
            // walks them when it finishes. A LIFO dependent that was cancelled finishes first and is freed,
            // so the later walk touched freed memory (crash in Operation.observeValue). Unlink it now.
            for dependency in operation.dependencies { operation.removeDependency(dependency) }
            guard let self, let operation = operation as? any ImageDownloaderOperationProtocol else { return }
            self.operationFinished(operation, key: key)
        }
        if let own = operation as? ImageDownloaderOperation, type(of: own) == ImageDownloaderOperation.self {
            // Our own class finishes through one path that runs this hook (no hop to a global queue).
            // Subclasses may override `start()`/`cancel()`, so they get the completion block below.
            own.onFinishing { [unowned own] in finished(own) }
        } else {
            operation.completionBlock = { [weak operation] in
                // The queue keeps the operation alive while this block runs.
                guard let operation else { return }
                finished(operation)
            }
        }
        if storedConfiguration.executionOrder == .lifo {
            for pending in queue.operations where !pending.isExecuting && !pending.isFinished && pending !== operation {
                pending.addDependency(operation)
            }
        }
        queue.addOperation(operation)
    }

    private func operationFinished(_ operation: any ImageDownloaderOperationProtocol, key: String) {
        router.unregister(operation)
        let drained: Bool = lock.withLock {
            if operations[key]?.operation === operation { operations[key] = nil }
            liveOperations -= 1
            return invalidated && liveOperations == 0
        }
        if drained { invalidateSessionOnce() }
    }

    /// Cancels one caller (called by its token).
    func cancel(_ token: ImageDownloadToken) {
        let operation = token.operation
        // The operation removes the caller and, if it was the last, closes itself to new callers in one
        // critical section: a concurrent `downloadImage` then creates a fresh operation.
        let wasLast = operation.cancel(token.callerToken)
        guard wasLast else { return }
        lock.withLock {
            if operations[token.coalescingKey]?.operation === operation { operations[token.coalescingKey] = nil }
        }
    }
}

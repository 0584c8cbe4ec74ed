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
        /// The memory-cache writes done for this operation's callers (one per variant).
        let cacheWrites: CacheWrites

        /// Finished or cancelled: never joined again.
        var isClosed: Bool { operation.isFinished || operation.isCancelled }
    }

    /// One caller of `downloadImage`, as the operation needs it.
    private struct Caller {
        let options: ImageDownloaderOptions
        let progress: ImageDownloaderProgressHandler?
        let queue: DispatchQueue?
        let variant: ImageVariant
        let transformer: (any ImageTransformer)?
        let allowsIncompleteImages: Bool

        init(
            options: ImageDownloaderOptions, context: ImageDownloaderContext, progress: ImageDownloaderProgressHandler?,
            allowsIncompleteImages: Bool
        ) {
            self.options = options
            self.progress = progress
            self.queue = context.callbackQueue
            self.variant = ImageVariant(options: options, context: context)
            self.transformer = context.transformer
            self.allowsIncompleteImages = allowsIncompleteImages
        }
    }

    private let lock = NSLock()
    private let storedConfiguration: ImageDownloaderConfiguration
    /// The timer behind every operation's timeouts.
    let deadlineMonitor: DeadlineMonitor
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
    /// `invalidate(cancelPendingOperations: true)` was called: an operation still being queued is cancelled.
    private var cancelsEverything = false
    /// LIFO: the order operations were published in (see `enqueue`).
    private var lifoSequence: [ObjectIdentifier: UInt64] = [:]
    private var nextSequence: UInt64 = 0
    /// Set by `invalidate`: how to end the session once the last operation has finished.
    private var pendingSessionInvalidation: SessionInvalidation?

    private enum SessionInvalidation {
        case cancelTasks, finishTasks
    }

    /// Creates a downloader with its own session and queue; `configuration` is copied.
    public convenience init(configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration()) {
        self.init(configuration: configuration, deadlineMonitor: .shared)
    }

    /// `deadlineMonitor`: the timer behind the operations' timeouts (tests pass one on a manual clock).
    init(configuration: ImageDownloaderConfiguration, deadlineMonitor: DeadlineMonitor) {
        self.deadlineMonitor = deadlineMonitor
        var configuration = configuration
        configuration.maxConcurrentDownloads = max(1, configuration.maxConcurrentDownloads)
        let sessionConfiguration = (configuration.sessionConfiguration.copy() as? URLSessionConfiguration) ?? .default
        // Linux facts: URLCache entries are served for every policy (the package caches itself), the request's
        // httpShouldHandleCookies is ignored (only the session setting works).
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.timeoutIntervalForRequest = DownloadSettings.backstopTimeout(idle: configuration.downloadTimeout)
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
    ///
    /// No lock is held while user code runs (the request modifier, a custom operation class's initialiser,
    /// `addHandlers` and properties, `OperationQueue.addOperation`): the lock only guards the map of
    /// operations in flight, and the operation is published there only once its first caller is added.
    private func download(
        _ request: URLRequest, plain: Bool, options: ImageDownloaderOptions, context: ImageDownloaderContext?,
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?
    ) -> ImageDownloadToken? {
        guard let url = request.url, Self.isSupported(url) else {
            completed?(nil, nil, ImageDownloaderError.invalidURL, true)
            return nil
        }
        let context = context ?? ImageDownloaderContext()
        let caller = Caller(
            options: options, context: context, progress: progress,
            allowsIncompleteImages: context.allowsIncompleteImages ?? storedConfiguration.allowsIncompleteImages)
        let cacheIdentifier = caller.variant.additionalIdentifier(cacheIdentifier: context.cacheIdentifier)
        if Self.allowsCachedData(request.cachePolicy), let cache = storedConfiguration.imageCache,
           let image = cache.image(for: request, withAdditionalIdentifier: cacheIdentifier) {
            completed?(image, nil, nil, true)
            return nil
        }
        let key = coalescingKey(url: url, identifier: context.cacheIdentifier, variant: caller.variant)
        let answer = wrap(completed, request: request, identifier: cacheIdentifier)

        var made: (operation: any ImageDownloaderOperationProtocol, request: URLRequest)?
        // A few rounds at most: each one either joins the operation in flight, or publishes its own; a round is
        // lost only to a concurrent caller that published first (or to an operation closing as we join it).
        for _ in 0..<8 {
            if let token = joinInFlight(key: key, url: url, caller: caller, answer: answer) { return token }
            if lock.withLock({ invalidated }) {
                completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
                return nil
            }
            if made == nil {
                // User code (the request modifier) runs outside the lock.
                guard let prepared = prepareRequest(request, plain: plain, options: options, context: context) else {
                    completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
                    return nil
                }
                if let refusal = refusal(for: prepared) {
                    // Never queued: no progress call, no operation.
                    completed?(nil, nil, refusal, true)
                    return nil
                }
                made = (makeOperation(request: prepared, options: options, context: context), prepared)
            }
            guard let (operation, prepared) = made else { break }
            let writes = CacheWrites()
            // Our caller first: nobody else can reach the operation yet, so it cannot have closed.
            guard let callerToken = addHandlers(to: operation, caller: caller, completed: answer(writes)) else { break }
            let published: Bool? = lock.withLock {
                if invalidated { return nil }
                if operations[key] != nil { return false }
                operations[key] = Entry(operation: operation, cacheWrites: writes)
                liveOperations += 1
                return true
            }
            switch published {
            case nil:
                completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
                return nil
            case false?:
                // Another caller of the key published first: join it (this operation is dropped unstarted,
                // and its caller record with it, never answered).
                made = nil
                continue
            case true?:
                enqueue(operation, key: key)
                return ImageDownloadToken(
                    url: url, request: prepared, operation: operation, callerToken: callerToken, coalescingKey: key,
                    downloader: self)
            }
        }
        completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
        return nil
    }

    /// Why the prepared request (after the request modifier) cannot be loaded at all: no URL, a scheme the
    /// transport cannot load (`.invalidURL`), or a host it cannot reach on this platform (`.unsupportedOnPlatform`).
    private func refusal(for request: URLRequest) -> ImageDownloaderError? {
        guard let url = request.url, Self.isSupported(url) else { return .invalidURL }
        return URLSessionLimits.unsupportedReason(for: url).map { .unsupportedOnPlatform($0) }
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
            cancelsEverything = cancelPendingOperations
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

    /// One operation per URL + cache identifier. Callers with different variants share it, except on a custom
    /// operation class that is no `ImageDownloaderOperation` (it decodes once, with its own settings): there
    /// each variant gets its own operation.
    private func coalescingKey(url: URL, identifier: String?, variant: ImageVariant) -> String {
        var key = url.absoluteString
        if let identifier, !identifier.isEmpty { key += "\u{1F}" + identifier }
        if let type = storedConfiguration.operationClass, !(type is ImageDownloaderOperation.Type) {
            key += "\u{1F}\(variant.decoding == nil ? "data" : "image")\u{1F}\(variant.decoding?.maximumPixelCount ?? 0)\u{1F}"
                + variant.cacheKey
        }
        return key
    }

    /// The completion wrapper that adds the caller's image to the memory cache (under the caller's variant)
    /// once per operation and variant, before the caller runs (so a request made from the completion already
    /// hits the cache).
    private func wrap(
        _ completed: ImageDownloaderCompletedHandler?, request: URLRequest, identifier: String?
    ) -> (CacheWrites) -> ImageDownloaderCompletedHandler? {
        guard let cache = storedConfiguration.imageCache else { return { _ in completed } }
        return { writes in
            { image, data, error, finished in
                if finished, error == nil, let image, !image.isIncomplete, writes.claim(identifier ?? ""),
                   cache.shouldCache(image, for: request, withAdditionalIdentifier: identifier) {
                    cache.add(image, for: request, withAdditionalIdentifier: identifier)
                }
                completed?(image, data, error, finished)
            }
        }
    }

    /// Adds a caller to the operation in flight for `key`, if there is one that still takes callers, and
    /// raises its priority if needed. The lock is held only to read the map.
    private func joinInFlight(
        key: String, url: URL, caller: Caller, answer: (CacheWrites) -> ImageDownloaderCompletedHandler?
    ) -> ImageDownloadToken? {
        guard let entry = lock.withLock({ operations[key] }) else { return nil }
        guard !entry.isClosed,
              let callerToken = addHandlers(to: entry.operation, caller: caller, completed: answer(entry.cacheWrites))
        else {
            // It no longer takes callers: forget it, so the next round publishes a fresh operation.
            lock.withLock { if operations[key]?.operation === entry.operation { operations[key] = nil } }
            return nil
        }
        let wanted = Self.priority(for: caller.options)
        if wanted.rawValue > entry.operation.queuePriority.rawValue { entry.operation.queuePriority = wanted }
        return ImageDownloadToken(
            url: url, request: entry.operation.request, operation: entry.operation, callerToken: callerToken,
            coalescingKey: key, downloader: self)
    }

    private func addHandlers(
        to operation: any ImageDownloaderOperationProtocol, caller: Caller, completed: ImageDownloaderCompletedHandler?
    ) -> AnyObject? {
        if let own = operation as? ImageDownloaderOperation {
            return own.addHandlers(
                forProgress: caller.progress, completed: completed, queue: caller.queue, variant: caller.variant,
                transformer: caller.transformer, allowsIncompleteImages: caller.allowsIncompleteImages)
        }
        return operation.addHandlers(forProgress: caller.progress, completed: completed)
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
        // The transport's own timeout is a backstop: the operation enforces the idle timeout itself.
        let timeout = DownloadSettings.backstopTimeout(idle: context.downloadTimeout ?? storedConfiguration.downloadTimeout)
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
        merged.maximumDownloadDuration = context.maximumDownloadDuration ?? configuration.maximumDownloadDuration
        merged.allowsIncompleteImages = context.allowsIncompleteImages ?? configuration.allowsIncompleteImages
        merged.progressiveDecodingInterval = context.progressiveDecodingInterval ?? configuration.progressiveDecodingInterval
        merged.maximumPixelCount = context.maximumPixelCount ?? configuration.maximumPixelCount
        merged.httpCache = context.httpCache ?? configuration.httpCache
        merged.postsNotifications = context.postsNotifications ?? configuration.postsNotifications

        let type = configuration.operationClass ?? ImageDownloaderOperation.self
        let operation = type.init(request: request, session: session, options: options, context: merged)
        operation.credential = configuration.effectiveCredential
        operation.minimumProgressInterval = configuration.minimumProgressInterval
        operation.acceptableStatusCodes = configuration.acceptableStatusCodes
        operation.acceptableContentTypes = configuration.acceptableContentTypes
        operation.queuePriority = Self.priority(for: options)
        return operation
    }

    /// Registers the operation with the router and the queue. Without the lock: `addOperation` and a custom
    /// operation's properties are user code. LIFO: each pending operation waits for every newer one; which is
    /// newer is decided by a sequence number taken under the lock, so two operations queued at once never wait
    /// for each other (a cycle would hang both).
    private func enqueue(_ operation: any ImageDownloaderOperationProtocol, key: String) {
        let router = self.router
        router.register(operation)
        if let own = operation as? ImageDownloaderOperation {
            own.deadlineMonitor = deadlineMonitor
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
        if storedConfiguration.executionOrder == .lifo { orderNewestFirst(operation) }
        queue.addOperation(operation)
        // `invalidate(cancelPendingOperations: true)` ran while this operation was being queued.
        if lock.withLock({ cancelsEverything }) { operation.cancel() }
    }

    /// LIFO: makes every pending operation published before `operation` wait for it, and `operation` wait for
    /// any published after it that is already queued (concurrent `downloadImage` calls).
    private func orderNewestFirst(_ operation: any ImageDownloaderOperationProtocol) {
        let sequence: UInt64 = lock.withLock {
            nextSequence += 1
            lifoSequence[ObjectIdentifier(operation)] = nextSequence
            return nextSequence
        }
        let pending = queue.operations.filter { $0 !== operation && !$0.isExecuting && !$0.isFinished }
        let order = lock.withLock { pending.map { lifoSequence[ObjectIdentifier($0)] } }
        for (other, otherSequence) in zip(pending, order) {
            guard let otherSequence else { continue }
            if otherSequence < sequence { other.addDependency(operation) } else { operation.addDependency(other) }
        }
    }

    private func operationFinished(_ operation: any ImageDownloaderOperationProtocol, key: String) {
        router.unregister(operation)
        let drained: Bool = lock.withLock {
            if operations[key]?.operation === operation { operations[key] = nil }
            lifoSequence[ObjectIdentifier(operation)] = nil
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

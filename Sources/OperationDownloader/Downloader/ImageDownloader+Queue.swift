import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request to send, the operation that sends it, and the queue that runs it (Docs/Downloader.md).
extension ImageDownloader {
    static func isSupported(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        switch scheme {
        // The raw host: emptiness is all this asks, so the host is not percent-decoded (`url.host` would,
        // on every download).
        case "http", "https": return url.host(percentEncoded: true)?.isEmpty == false
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

    static func priority(for options: ImageDownloaderOptions) -> Operation.QueuePriority {
        if options.contains(.highPriority) { return .high }
        if options.contains(.lowPriority) { return .low }
        return .normal
    }

    /// Timeout, cache policy, the downloader's headers (the request's own win), then the request modifier.
    ///
    /// The timeout callers see (the token's and the operation's `request`, what the modifier receives) is the
    /// idle timeout, `downloadTimeout` (0 or less: 15 s), as SDWebImage's request carries it. The URLSession
    /// transport's backstop lives only in that transport's own copy of the request (URLSessionTransfer).
    ///
    /// Built with as few `URLRequest` mutations as possible: in corelibs Foundation each one copies the
    /// request when it is shared, and `setValue(_:forHTTPHeaderField:)` costs several times a whole small
    /// download's share of the package (Docs/Downloader.md has the measurement). The downloader's headers
    /// are kept in the form `setValue` produces (see `setValue(_:forHTTPHeaderField:)`), so one assignment
    /// of the merged fields sends the same bytes.
    /// `modified`: a request modifier ran (so the URL may have changed). nil: the modifier returned nil.
    /// `idleTimeout`: the download's (the context's `downloadTimeout`, else the configuration's, normalised).
    func prepareRequest(
        _ request: URLRequest, plain: Bool, options: ImageDownloaderOptions, idleTimeout timeout: TimeInterval,
        context: ImageDownloaderContext?
    ) -> (request: URLRequest, modified: Bool)? {
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
        guard let modifier = context?.requestModifier ?? modifier else { return (prepared, false) }
        return modifier.modifiedRequest(with: prepared).map { ($0, true) }
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

    /// Creates the operation (of the configured class: `OperationMaker`) with the caller's context filled by the
    /// downloader's settings and plumbing (`ImageDownloaderContext.fill`, ResolvedOptions.swift), so any
    /// operation class gets them through `init`. `cacheRequest`: the caller's request, the memory cache's key.
    /// `downloadTimeout`: the request modifier's timeout, when it changed the download's. `madeFromURL`: the
    /// request is `prepareRequest`'s own, built from a URL and left alone by any modifier.
    func makeOperation(
        request: URLRequest, cacheRequest: URLRequest, options: ImageDownloaderOptions,
        context: ImageDownloaderContext?, downloadTimeout: TimeInterval?, madeFromURL: Bool = false
    ) -> any DownloadOperationHandle {
        let configuration = storedConfiguration
        let memoryCache = configuration.imageCache.map { MemoryCacheWriter(cache: $0, request: cacheRequest) }
        let (responseModifier, decryptor) = lock.withLock { (storedResponseModifier, storedDecryptor) }
        let usesHTTPCache = options.contains(.useURLCache) && (context?.httpCache ?? configuration.httpCache) != nil
        // [HTTP cache] stale-while-revalidate starts its background download through this downloader.
        let plumbing = DownloadPlumbing(
            resources: resources, memoryCache: memoryCache, revalidator: usesHTTPCache ? .downloader(self) : nil,
            timeoutIntervalIsUnset: madeFromURL)
        var filled: ImageDownloaderContext? = context ?? .empty
        filled?.fill(
            by: configuration, callbackQueue: callbackQueue, responseModifier: responseModifier, decryptor: decryptor,
            plumbing: plumbing)
        if let downloadTimeout { filled?.downloadTimeout = downloadTimeout }
        // Handed over as an Optional, so `init` (whose parameter is one) takes it without another copy.
        return operationMaker.make(
            request: request, session: session, options: options, context: filled, configuration: configuration)
    }

    /// Hands the operation to the queue (its handle first learns the router and the downloader's finishing
    /// hook). Without the lock: `addOperation` and a custom operation's properties are user code.
    func enqueue(_ handle: any DownloadOperationHandle, key: CoalescingKey) {
        let operation = handle.operation
        handle.prepareToRun(router: router) { [weak self] operation in
            // corelibs Foundation: a dependency keeps an UNRETAINED back-reference to each dependent and
            // walks them when it finishes. A LIFO dependent that was cancelled finishes first and is freed,
            // so the later walk touched freed memory (crash in Operation.observeValue). Unlink it now.
            for dependency in operation.dependencies { operation.removeDependency(dependency) }
            self?.operationFinished(operation, key: key)
        }
        if storedConfiguration.executionOrder == .lifo { orderNewestFirst(operation) }
        handle.observation?.enqueued()  // [Observability] od_queue_depth
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

    private func operationFinished(_ operation: any ImageDownloaderOperationProtocol, key: CoalescingKey) {
        let (drained, idle): (Bool, [@Sendable () -> Void]) = lock.withLock {
            if operations[key]?.operation === operation { operations[key] = nil }
            if !lifoSequence.isEmpty { lifoSequence[ObjectIdentifier(operation)] = nil }
            liveOperations -= 1
            guard liveOperations == 0 else { return (false, []) }
            return (invalidated, idleWaits.takeWaiting())
        }
        if drained { invalidateTransportOnce() }
        for body in idle { body() }
    }

}

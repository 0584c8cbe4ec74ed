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
    // Files: this one (settings, the transport, invalidation), ImageDownloader+Coalescing.swift (callers
    // joining an operation in flight or publishing a new one), ImageDownloader+Queue.swift (the request,
    // the operation, the queue), ImageDownloader+Idle.swift (waiting until nothing is in flight).
    /// A downloader with the default configuration.
    public static let shared = ImageDownloader()

    /// THE default callback queue rule, for every owner that has no configured queue (each downloader, each
    /// prefetcher, operations on their own): the main queue on Apple platforms, a private serial queue named
    /// `label` elsewhere (CLI and server programs on Linux rarely spin the main run loop; a queue per owner, so
    /// one slow handler does not hold up the others).
    static func makeDefaultCallbackQueue(label: String) -> DispatchQueue {
        #if canImport(FoundationNetworking)
        return DispatchQueue(label: label)
        #else
        return DispatchQueue.main
        #endif
    }

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

    let lock = NSLock()
    let storedConfiguration: ImageDownloaderConfiguration
    /// The timer behind every operation's timeouts.
    let deadlineMonitor: DeadlineMonitor
    /// What carries the transfers (`configuration.transport`; see `makeTransport`).
    let transport: any DownloadTransport
    /// The URLSession behind the transport, if it is URLSession's: given to operations (custom classes may
    /// create their own tasks on it), and its router learns about such operations.
    let session: URLSession?
    let router: SessionRouter?
    /// The transport and timer every operation gets (in its context's plumbing).
    let resources: DownloaderResources
    let queue = OperationQueue()
    let callbackQueue: DispatchQueue
    /// Makes the operations, of the configured class, as the handles the downloader talks to
    /// (Downloader/OperationAdapter/).
    let operationMaker: OperationMaker
    // The vars below are only touched under `lock`: no dynamic exclusivity check needed.
    @exclusivity(unchecked) var headers: [String: String] = [
        "Accept": "image/*,*/*;q=0.8",
        "User-Agent": ImageDownloader.defaultUserAgent,
    ]
    @exclusivity(unchecked) var storedRequestModifier: (any ImageDownloaderRequestModifier)?
    @exclusivity(unchecked) var storedResponseModifier: (any ImageDownloaderResponseModifier)?
    @exclusivity(unchecked) var storedDecryptor: (any ImageDownloaderDecryptor)?
    /// The operations in flight, by coalescing key.
    @exclusivity(unchecked) var operations: [CoalescingKey: any DownloadOperationHandle] = [:]
    @exclusivity(unchecked) var liveOperations = 0
    @exclusivity(unchecked) var invalidated = false
    /// `invalidate(cancelPendingOperations: true)` was called: an operation still being queued is cancelled.
    @exclusivity(unchecked) var cancelsEverything = false
    /// LIFO: the order operations were published in (see `orderNewestFirst`).
    @exclusivity(unchecked) var lifoSequence: [ObjectIdentifier: UInt64] = [:]
    @exclusivity(unchecked) var nextSequence: UInt64 = 0
    /// Set by `invalidate`: how to end the transport once the last operation has finished.
    @exclusivity(unchecked) var pendingInvalidation: Invalidation?
    /// Who waits for `liveOperations` to reach 0 (`whenIdle`, `waitUntilIdle`: ImageDownloader+Idle.swift).
    @exclusivity(unchecked) var idleWaits = IdleWaits()

    enum Invalidation {
        case cancelTransfers, finishTransfers
    }

    /// Creates a downloader with its own transport (session) and queue; `configuration` is copied.
    public convenience init(configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration()) {
        self.init(configuration: configuration, deadlineMonitor: .shared)
    }

    /// `deadlineMonitor`: the timer behind the operations' timeouts (tests pass one on a manual clock).
    /// `transport`: instead of the configuration's (tests pass a scripted one). `decodingBudget`: what final
    /// decodes reserve against (tests pass one of their own).
    init(
        configuration: ImageDownloaderConfiguration, deadlineMonitor: DeadlineMonitor,
        transport: (any DownloadTransport)? = nil, decodingBudget: ImageDecodingBudget = .shared
    ) {
        self.deadlineMonitor = deadlineMonitor
        var configuration = configuration
        // Resolved once (the default depends on what else the configuration holds), and kept as chosen: the
        // downloader's `configuration` says which transport it runs.
        configuration.transport = configuration.transport
        configuration.maxConcurrentDownloads = max(1, configuration.maxConcurrentDownloads)
        let sessionConfiguration = (configuration.sessionConfiguration.copy() as? URLSessionConfiguration) ?? .default
        // Linux facts: URLCache entries are served for every policy (the package caches itself), the request's
        // httpShouldHandleCookies is ignored (only the session setting works).
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.timeoutIntervalForRequest = TransportBackstop.timeout(idle: configuration.downloadTimeout)
        sessionConfiguration.httpMaximumConnectionsPerHost = max(
            sessionConfiguration.httpMaximumConnectionsPerHost, configuration.maxConcurrentDownloads)
        configuration.sessionConfiguration = sessionConfiguration
        storedConfiguration = configuration
        operationMaker = OperationMaker(operationClass: configuration.operationClass)

        callbackQueue = configuration.callbackQueue
            ?? Self.makeDefaultCallbackQueue(label: "OperationDownloader.ImageDownloader.callbacks")
        queue.name = "OperationDownloader.ImageDownloader"
        queue.maxConcurrentOperationCount = configuration.maxConcurrentDownloads
        let made = transport ?? Self.makeTransport(configuration, sessionConfiguration: sessionConfiguration)
        self.transport = made
        session = (made as? URLSessionTransport)?.session
        router = (made as? URLSessionTransport)?.router
        let telemetry = DownloaderTelemetry.make(configuration: configuration)
        resources = DownloaderResources(
            transport: made, deadlineMonitor: deadlineMonitor, telemetry: telemetry, decodingBudget: decodingBudget)
        // [Observability] the HTTP cache's own events (Redis, write failures) go where this downloader's do,
        // unless the cache has a sink or log handler of its own.
        if telemetry != nil { configuration.httpCache?.adoptTelemetry(sink: configuration.metricsSink, logHandler: configuration.logHandler) }
    }

    /// THE factory point of transports: `configuration.transport` becomes the `DownloadTransport` every
    /// operation of this downloader uses (curl: with the configuration's TLS, proxy and per-host cap).
    static func makeTransport(
        _ configuration: ImageDownloaderConfiguration, sessionConfiguration: URLSessionConfiguration
    ) -> any DownloadTransport {
        let choice = configuration.transport
        switch choice.kind {
        case .urlSession:
            return URLSessionTransport(configuration: sessionConfiguration)
        case .curl:
            if let reason = choice.unavailableReason { return UnavailableTransport(reason: reason) }
            if let reason = OperationMaker(operationClass: configuration.operationClass).reasonItNeedsURLSession {
                return UnavailableTransport(reason: reason)
            }
            return CurlTransport(configuration: configuration)
        }
    }

    deinit {
        // Not invalidated: cancel everything. Invalidated with operations still running: end the transport as
        // `invalidate` asked once they finish (their completion blocks no longer reach this object).
        let how: Invalidation? = lock.withLock { invalidated ? pendingInvalidation : .cancelTransfers }
        guard let how else { return }
        let transport = self.transport
        if how == .cancelTransfers { cancelEveryOperation() }
        queue.isSuspended = false
        // Nobody can reach this queue any more, so nothing can cancel this barrier.
        queue.addBarrierBlock { transport.invalidate(cancellingTransfers: how == .cancelTransfers) }
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

    /// Downloads and decodes `url` with `options` plus the configuration's `defaultOptions`. Returns the caller's
    /// token, or nil when the completion already ran synchronously (nil or unsupported URL, memory-cache hit,
    /// request modifier returned nil, invalidated).
    ///
    /// Label `completed:` when you pass only a completion: a bare trailing closure binds to `progress:`.
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
            URLRequest(url: url), plain: true, options: options.union(storedConfiguration.defaultOptions),
            context: context, progress: progress, completed: completed)
    }

    /// Downloads and decodes `request` (with `options` plus the configuration's `defaultOptions`); its headers
    /// win over the downloader's. The memory cache is consulted only for cache policies that allow cached data
    /// (the default `.useProtocolCachePolicy` does).
    @discardableResult
    public func downloadImage(
        with request: URLRequest, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil,
        progress: ImageDownloaderProgressHandler? = nil, completed: ImageDownloaderCompletedHandler? = nil
    ) -> ImageDownloadToken? {
        download(
            request, plain: false, options: options.union(storedConfiguration.defaultOptions), context: context,
            progress: progress, completed: completed)
    }

    /// Cancels every queued and running download; each caller gets `.cancelled` once.
    public func cancelAllDownloads() {
        cancelEveryOperation()
    }

    /// Cancels every queued and running operation with the queue suspended meanwhile: cancelling a running
    /// operation finishes it, and the queue would otherwise start a pending one (whose request then reaches the
    /// server) before the loop had cancelled it too.
    private func cancelEveryOperation() {
        let wasSuspended = queue.isSuspended
        queue.isSuspended = true
        queue.cancelAllOperations()
        queue.isSuspended = wasSuspended
    }

    /// Retires the downloader. With `cancelPendingOperations`, every queued and running download is cancelled
    /// (each caller gets `.cancelled` once); otherwise they finish normally. New downloads fail with
    /// `.invalidDownloadOperation`. The transport is invalidated once the queue has drained, so no transfer is
    /// ever made on an invalidated session.
    public func invalidate(cancelPendingOperations: Bool) {
        let first: Bool = lock.withLock {
            if invalidated { return false }
            invalidated = true
            cancelsEverything = cancelPendingOperations
            return true
        }
        guard first else { return }
        if cancelPendingOperations {
            cancelEveryOperation()
            // Cancelled operations finish as soon as they are started, so let them.
            queue.isSuspended = false
        }
        // No barrier block here: a later `cancelAllDownloads()` would cancel it, and corelibs then neither runs
        // it (the transport would never be invalidated) nor unlinks it from the operations it waited for (they
        // keep an unretained reference to it and crash when they finish). The last operation to finish
        // invalidates the transport instead.
        let invalidateNow: Bool = lock.withLock {
            pendingInvalidation = cancelPendingOperations ? .cancelTransfers : .finishTransfers
            return liveOperations == 0
        }
        if invalidateNow { invalidateTransportOnce() }
    }

    /// Invalidates the transport as `invalidate` asked, once, after the last operation has finished (so no
    /// task is ever created on an invalidated session, which is a fatal error on Linux).
    func invalidateTransportOnce() {
        let how: Invalidation? = lock.withLock {
            defer { pendingInvalidation = nil }
            return pendingInvalidation
        }
        guard let how else { return }
        transport.invalidate(cancellingTransfers: how == .cancelTransfers)
    }
}

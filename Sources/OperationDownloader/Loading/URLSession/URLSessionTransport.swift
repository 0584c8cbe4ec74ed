import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transfer client whose URLSession callbacks pass through another object first: the operation, so that a
/// subclass can override its `URLSessionDataDelegate` methods, whose default implementations hand each event
/// back to the `URLSessionTransfer` that owns the task.
protocol URLSessionDelegateProviding: AnyObject {
    var sessionDelegate: (any URLSessionDataDelegate)? { get }
}

/// The URLSession adapter (issue 14): one session, its delegate the `SessionRouter`, a `URLSessionTransfer`
/// per data task (where the corelibs workarounds live).
///
/// The downloader makes one for its lifetime; an operation used on its own makes one owning a private session,
/// or borrows the session it was given (whose delegate must then forward to the operation, as the router does).
final class URLSessionTransport: DownloadTransport, @unchecked Sendable {  // immutable after init; `invalidated` is a `Locked`
    let session: URLSession
    /// The session's delegate; nil for a borrowed session (its own delegate routes the callbacks).
    let router: SessionRouter?
    private let ownsSession: Bool
    /// The request timeout of the session's configuration, when this transport made the session (a borrowed
    /// session's configuration is not read: corelibs returns a copy of it on every access).
    private let sessionRequestTimeout: TimeInterval?
    private let invalidated = Locked(false)

    /// A transport with its own session on `configuration` (the caller has already made it cookie- and
    /// cache-free), delivering on one serial delegate queue.
    init(configuration: URLSessionConfiguration, delegateQueueName: String = "OperationDownloader.session-delegate") {
        let router = SessionRouter()
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.name = delegateQueueName
        self.router = router
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: delegateQueue)
        self.ownsSession = true
        self.sessionRequestTimeout = configuration.timeoutIntervalForRequest
    }

    /// A transport on someone else's session, never invalidated here.
    init(borrowing session: URLSession) {
        self.session = session
        self.router = nil
        self.ownsSession = false
        self.sessionRequestTimeout = nil
    }

    /// The configuration of a session an operation owns when it runs without a downloader.
    static func standaloneConfiguration(idleTimeout: TimeInterval) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = TransportBackstop.timeout(idle: idleTimeout)
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        return configuration
    }

    func makeTransfer(_ request: TransferRequest, client: any TransferClient) -> any TransportTransfer {
        // Creating a task on an invalidated session is a fatal error in corelibs: such a transfer just fails.
        if invalidated.current {
            return FailedTransfer(client: client, error: URLError(.cancelled))
        }
        return URLSessionTransfer(
            session: session, router: router, request: request, client: client,
            sessionDelegate: (client as? URLSessionDelegateProviding)?.sessionDelegate,
            sessionRequestTimeout: sessionRequestTimeout)
    }

    func invalidate(cancellingTransfers: Bool) {
        let first: Bool = invalidated.withLock { invalidated in
            defer { invalidated = true }
            return !invalidated
        }
        guard first, ownsSession else { return }
        // Never `invalidateAndCancel`: it cancels a task whose redirect decision is in progress, and corelibs
        // then traps when the decision's completion handler runs. The transfers cancel themselves safely.
        if cancellingTransfers { router?.cancelAll() }
        session.finishTasksAndInvalidate()
        // Every operation has finished by now (the downloader invalidates after the last one): no routing is
        // needed, and none may keep an operation (with this transport and its session) alive.
        router?.forgetAll()
    }

    func unsupportedReason(for url: URL) -> String? {
        URLSessionLimits.unsupportedReason(for: url)
    }
}

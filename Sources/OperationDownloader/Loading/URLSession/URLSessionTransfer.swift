import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One transfer over URLSession: one data task, its delegate callbacks turned into `TransferClient` events.
///
/// The corelibs Foundation workarounds live here, not in the operation:
/// - `completionHandler(.cancel)` for a response is ignored on Linux: every response is allowed, and the client
///   rejects one by cancelling the transfer (`task.cancel()`).
/// - Data keeps arriving after `cancel()`: once cancelled (or completed), no event reaches the client.
/// - A redirect or challenge completion handler called after `task.cancel()` traps ("Received callback for HTTP
///   redirection, but we're not waiting for it"): a cancel that arrives while one is being decided is issued
///   right after it, and a decision arriving after a cancel is dropped.
/// - `performDefaultHandling` for a challenge hangs forever and `useCredential` with nil crashes: a challenge
///   gets the client's credential or is cancelled, and then the 401 is the final response.
/// - A credential given after a redirect makes corelibs restart the ORIGINAL request (which redirects again:
///   21 requests, then -1007): such a challenge is refused without asking the client.
/// - The request timeout is truncated to whole seconds (0.5 fails at once): the task's copy of the request
///   carries the idle timeout rounded up plus a margin, a backstop behind the operation's own timeouts (the
///   request callers see keeps their `downloadTimeout`).
/// - No server-trust challenge exists on Linux: with `.allowInvalidSSLCertificates` a TLS failure completes
///   with `.unsupportedOnPlatform` saying so.
///
/// Not an `NSObject` (one per download): the session's callbacks reach it from the router directly, or through
/// the delegate methods of an operation class that may override them.
final class URLSessionTransfer: TransportTransfer, @unchecked Sendable {  // `flags` is lock-guarded (`Locked`); the rest is immutable
    private enum Stage { case created, running, ended }

    private struct Flags {
        var stage = Stage.created
        /// The operation, until the stage ends: then dropped, so no cycle (operation, attempt, transfer) outlives
        /// the transfer. Held strongly: a weak reference would give the operation a side table, and every
        /// retain of it the slow path (Docs/Transports.md, "Fewer objects per download").
        var client: (any TransferClient)?
        /// A redirect or challenge completion handler is pending: a cancel waits until it was called.
        var deciding = false
        var cancelAfterDecision = false
        /// A redirect was followed (see the challenge workaround).
        var redirected = false
    }

    let request: TransferRequest
    private let session: URLSession
    private let router: SessionRouter?
    /// Made with the transfer (its priority set), so that observers of `imageDownloadStart`, posted before
    /// `resume()`, already see the operation's `dataTask`.
    private let task: URLSessionDataTask
    private let flags: Locked<Flags>

    /// `sessionDelegate`: receives the task's callbacks first (the operation, whose overridable delegate methods
    /// hand them back here); nil: this transfer is the task's delegate itself.
    init(
        session: URLSession, router: SessionRouter?, request: TransferRequest, client: any TransferClient,
        sessionDelegate: (any URLSessionDataDelegate)?, sessionRequestTimeout: TimeInterval? = nil
    ) {
        self.session = session
        self.router = router
        self.request = request
        self.flags = Locked(Flags(client: client))
        var urlRequest = request.urlRequest
        let backstop = TransportBackstop.timeout(idle: request.idleTimeout)
        #if canImport(FoundationNetworking)
        // corelibs times a request whose `timeoutInterval` was never assigned by the session's request timeout.
        // When that is the backstop already, the assignment is skipped: it would copy the shared request, on
        // every download (Docs/Transports.md). `CorelibsRequestTimeoutTests` checks the corelibs fact.
        let sessionSetsBackstop = request.timeoutIntervalIsUnset && sessionRequestTimeout == backstop
        #else
        let sessionSetsBackstop = false
        #endif
        if !sessionSetsBackstop, urlRequest.timeoutInterval != backstop { urlRequest.timeoutInterval = backstop }
        let task = session.dataTask(with: urlRequest)
        // corelibs stores the priority but libcurl does not use it; set it anyway (Apple uses it).
        if request.priority != URLSessionTask.defaultPriority { task.priority = request.priority }
        self.task = task
        if let sessionDelegate {
            router?.bind(task, to: sessionDelegate, transfer: self)
        } else {
            router?.bind(task, to: self)
        }
    }

    /// The data task, made with the transfer (suspended until `resume()`).
    var dataTask: URLSessionDataTask? { task }

    /// Whether `task` is this transfer's and still reports events.
    func owns(_ task: URLSessionTask) -> Bool {
        liveClient(for: task) != nil
    }

    /// The client, while `task` is this transfer's and still reports events.
    private func liveClient(for task: URLSessionTask) -> (any TransferClient)? {
        flags.withLock { f in f.stage == .running && self.task === task ? f.client : nil }
    }

    // MARK: - TransportTransfer

    func resume() {
        let starts: Bool = flags.withLock { f in
            guard f.stage == .created else { return false }
            f.stage = .running
            return true
        }
        if starts { task.resume() }
    }

    func cancel() {
        let deferred: Bool? = flags.withLock { f in
            guard f.stage != .ended else { return nil }
            f.stage = .ended
            f.client = nil
            if f.deciding { f.cancelAfterDecision = true }
            return f.deciding
        }
        guard let deferred else { return }
        if deferred {
            router?.forget(task)  // the cancel itself follows the decision (`endDecision`)
        } else {
            // Also a task never resumed: a session waits for each of its tasks before it invalidates.
            stop(task)
        }
    }

    /// URLSession has no backpressure on Linux (and no reliable one elsewhere for data tasks): ignored; the
    /// operation's size limit bounds memory.
    func suspendReading() {}
    func resumeReading() {}

    func setPriority(_ priority: Float) {
        guard task.priority != priority else { return }
        task.priority = priority
    }

    // MARK: - The session's callbacks (from the router, or from the operation's delegate methods)

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // Always allow: `.cancel` is ignored on Linux, so the client rejects a response with `cancel()`.
        defer { completionHandler(.allow) }
        guard let client = liveClient(for: dataTask) else { return }
        client.transfer(self, didReceive: TransportResponse(response))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Data keeps arriving after cancel() on Linux: dropped here.
        guard let client = liveClient(for: dataTask) else { return }
        client.transfer(self, didReceive: data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // After `task.cancel()` the completion handler must not run (corelibs traps); the cancel ends the task.
        guard let client = beginDecision(task) else { return }
        let decision = client.transfer(self, willRedirect: response, to: request)
        if decision != nil { flags.withLock { f in f.redirected = true } }
        completionHandler(decision)
        endDecision()
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
        if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
            // Apple platforms only: Linux has no server-trust challenge (an invalid certificate simply fails).
            if self.request.allowsInvalidCertificates, let trust = challenge.protectionSpace.serverTrust {
                completionHandler(.useCredential, URLCredential(trust: trust))
            } else {
                completionHandler(.performDefaultHandling, nil)
            }
            return
        }
        #endif
        guard let client = beginDecision(task) else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        var credential: URLCredential?
        #if canImport(FoundationNetworking)
        let askClient = !flags.withLock { f in f.redirected }
        #else
        let askClient = true
        #endif
        if askClient { credential = client.transfer(self, didReceive: TransferChallenge(challenge)) }
        if let credential {
            completionHandler(.useCredential, credential)
            endDecision()
            return
        }
        // Never `.performDefaultHandling` (it hangs forever on Linux) and never a nil credential (it crashes).
        completionHandler(.cancelAuthenticationChallenge, nil)
        // The 401 already reached the client: it is the final response. Report the end and stop the task.
        let live: Bool = flags.withLock { f in
            f.deciding = false
            f.cancelAfterDecision = false
            let live = f.stage == .running
            f.stage = .ended
            f.client = nil
            return live
        }
        if live { client.transfer(self, didCompleteWith: nil, metrics: TransferMetrics()) }
        stop(task)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let client: (any TransferClient)? = flags.withLock { f in
            guard f.stage == .running, self.task === task else { return nil }
            f.stage = .ended
            defer { f.client = nil }
            return f.client
        }
        guard let client else { return }
        client.transfer(self, didCompleteWith: error.map(transferError), metrics: TransferMetrics())
    }

    // MARK: - Helpers

    /// Cancels `task` and unroutes it: no event reaches the client any more, so the router need not keep this
    /// transfer (or its operation) alive.
    private func stop(_ task: URLSessionTask) {
        task.cancel()
        router?.forget(task)
    }

    /// The client, when `task` is live: a cancel now waits for the decision (`endDecision`).
    private func beginDecision(_ task: URLSessionTask) -> (any TransferClient)? {
        flags.withLock { f in
            guard f.stage == .running, self.task === task, let client = f.client else { return nil }
            f.deciding = true
            return client
        }
    }

    /// Issues the cancel that arrived while the decision was being made, after its completion handler (queued
    /// behind that handler's own work on the task's queue, so corelibs sees them in order).
    private func endDecision() {
        let deferred: Bool = flags.withLock { f in
            f.deciding = false
            defer { f.cancelAfterDecision = false }
            return f.cancelAfterDecision
        }
        if deferred { task.cancel() }
    }

    /// A `URLError` as the seam expects it; a TLS failure with `.allowInvalidSSLCertificates` on Linux says that
    /// the platform cannot accept an invalid certificate instead of looking like an ordinary network error.
    private func transferError(_ error: any Error) -> any Error {
        guard let urlError = error as? URLError else {
            return URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
        }
        #if canImport(FoundationNetworking)
        if request.allowsInvalidCertificates, request.urlRequest.url?.scheme?.lowercased() == "https" {
            let tlsCodes: Set<URLError.Code> = [
                .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
                .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            ]
            let message = urlError.localizedDescription
            if tlsCodes.contains(urlError.code) || message.contains("SSL") || message.contains("certificate") {
                return ImageDownloaderError.unsupportedOnPlatform(
                    "allowInvalidSSLCertificates: URLSession on Linux cannot accept an invalid certificate (\(message))")
            }
        }
        #endif
        return urlError
    }
}

extension TransferChallenge {
    /// The transport-neutral form of a URLSession challenge.
    init(_ challenge: URLAuthenticationChallenge) {
        let space = challenge.protectionSpace
        self.init(
            host: space.host, port: space.port, authenticationMethod: space.authenticationMethod, realm: space.realm,
            previousFailureCount: challenge.previousFailureCount, isProxy: space.isProxy())
    }
}

import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt: a transfer on the transport, and its events (`TransferClient`). The transport delivers the
/// events of a transfer one at a time, in order; each handler checks under the lock that the transfer is still
/// the running one (events of a cancelled transfer may still be running on another thread).
extension ImageDownloaderOperation: TransferClient {
    // MARK: - Starting an attempt

    /// The transport of this operation: the downloader's (from the context), else one on the session given to
    /// `init`, else one owning a session of its own (invalidated when the operation finishes).
    private func resolveTransport() -> any DownloadTransport {
        if let transport = context.downloader?.transport { return transport }
        if let resolved = state.withLock({ $0.transport }) { return resolved }  // a later attempt
        let made: any DownloadTransport
        if let givenSession {
            made = URLSessionTransport(borrowing: givenSession)
        } else {
            made = URLSessionTransport(
                configuration: URLSessionTransport.standaloneConfiguration(idleTimeout: settings.idleTimeout),
                delegateQueueName: "OperationDownloader.operation-session")
        }
        state.withLock {
            $0.transport = made
            $0.ownsTransport = givenSession == nil
        }
        return made
    }

    /// Starts one transfer of `request`: the first attempt, or a retry after its wait
    /// (ImageDownloaderOperation+Retry.swift), each seen by the callers as a start. `first` false: a later
    /// transfer of the same attempt (the HTTP cache's refetch), which the callers already saw start.
    func startAttempt(_ request: URLRequest, first: Bool = true) {
        // data: URLs are served by the package itself, on every transport (DataURLTransfer).
        let servesData = DataURLTransfer.serves(request)
        let transport = servesData ? nil : resolveTransport()
        // Refused before anything is sent: a request without a URL is a fatal error inside corelibs, and a host
        // the transport cannot reach fails with an unexplained code. (The downloader checked its requests already.)
        let refusal: ImageDownloaderError? = request.url.map { url in
            context.downloader == nil ? transport?.unsupportedReason(for: url).map { .unsupportedOnPlatform($0) } : nil
        } ?? .invalidURL
        if let refusal {
            state.withLock { $0.metrics.startedAt = Date() }
            finish(error: refusal, cancelTransfer: false)
            return
        }
        let transferRequest = TransferRequest(
            urlRequest: request, allowsInvalidCertificates: options.contains(.allowInvalidSSLCertificates),
            priority: TransferRequest.priority(for: queuePriority), idleTimeout: settings.idleTimeout,
            maximumResponseSize: settings.maximumResponseSize)
        let transfer: any TransportTransfer = if let transport {
            transport.makeTransfer(transferRequest, client: self)
        } else {
            DataURLTransfer(request: transferRequest, client: self)
        }
        let timeouts = TransferTimeouts(
            monitor: deadlineMonitor, idle: settings.idleTimeout, maximumDuration: settings.maximumDownloadDuration)
        let (cancelledWhileStarting, reports): (Bool, Bool) = state.withLock {
            $0.beginAttempt(Attempt(transfer: transfer, timeouts: timeouts, sniffs: settings.sniffsBody))
            return ($0.cancelRequested, $0.hasProgressHandlers)
        }
        if cancelledWhileStarting {
            finish(error: ImageDownloaderError.cancelled, cancelTransfer: true)
            transfer.cancel()  // also when the operation had already finished: a URLSession task exists already
            return
        }
        if first {
            if settings.mayDecodeProgressively { startProgressiveDecoding() }
            if reports { callers.reportProgress(0, -1) }
            callers.post([.imageDownloadStart], object: self)
        }
        let running = timeouts.start(
            lastActivity: { [weak self] in self?.lastActivity(of: transfer) ?? 0 },
            onTimeout: { [weak self] error in
                self?.attemptFailed(transfer, ImageDownloaderError.network(error), cancelTransfer: true)
            })
        let kept: Bool = state.withLock { s in
            s.modifyAttempt(of: transfer) { attempt in
                guard !attempt.timeoutsStopped else { return false }
                attempt.runningTimeouts = running
                return true
            } ?? false
        }
        // The attempt ended during start (a cancel from the start progress callback): no registration stays.
        if !kept { timeouts.stop(running) }
        transfer.resume()
    }

    var hasProgressHandlers: Bool { state.withLock { $0.hasProgressHandlers } }

    /// When `transfer` last reported an event (read by the deadline monitor when the idle deadline is due).
    private func lastActivity(of transfer: any TransportTransfer) -> UInt64 {
        state.withLock { $0.modifyAttempt(of: transfer) { $0.lastActivity } } ?? 0
    }

    // MARK: - TransferClient

    func transfer(_ transfer: any TransportTransfer, didReceive response: TransportResponse) {
        let now = deadlineMonitor.now()
        guard state.withLock({ $0.activeAttempt(of: transfer, now: now) != nil }) else { return }
        var response = response
        var fromCache: CachedHTTPResponse?
        let serverResponse = response.statusCode == nil ? nil : response
        if let serverResponse {
            // Cookies and the HTTP cache see the server's response, before any response modifier.
            switch httpTransaction.received(serverResponse) {
            case .proceed:
                break
            case .notModified:
                finish(error: ImageDownloaderError.notModified, cancelTransfer: true)
                return
            case .serveFromCache(let cached):  // [HTTP cache] a 304 refresh, or stale-if-error on a 5xx
                fromCache = cached
                response = TransportResponse(cached.response)
            case .refetch(let request):  // [HTTP cache] a 304 that matches no stored response: fetch anew
                refetch(request, replacing: transfer)
                return
            }
        }
        if let modifier = context.responseModifier {
            guard let modified = modifier.modifiedResponse(with: response.urlResponse) else {
                finish(error: ImageDownloaderError.invalidDownloadResponse, cancelTransfer: true)
                return
            }
            if modified !== response.urlResponse { response = TransportResponse(modified) }
        }
        let status = response.statusCode
        let checked: (ResponseValidation, Bool, Bool)? = state.withLock { s in
            let mayRetry = s.credential != nil
            let authAttempts: Int? = s.modifyAttempt(of: transfer) { attempt in
                // An authentication retry sends a second response: everything about the body starts over.
                attempt.buffer = Data()
                if attempt.sniffer != nil { attempt.sniffer = BodySniffer() }
                attempt.lastReportedSize = -1
                attempt.awaitingAuthRetry = false
                attempt.serverResponse = serverResponse
                attempt.revalidated = fromCache
                if fromCache != nil { attempt.sniffer = nil }  // [HTTP cache] the stored body is the one delivered
                return attempt.authAttempts
            }
            guard let authAttempts else { return nil }
            s.response = response
            s.metrics.recordResponse(status: status)
            if let fromCache {  // [HTTP cache]
                s.metrics.source = fromCache.source
                s.metrics.servedStale = fromCache.isStale
            }
            let validation = ResponseValidation(
                acceptableStatusCodes: s.acceptableStatusCodes, acceptableContentTypes: s.acceptableContentTypes,
                maximumResponseSize: settings.maximumResponseSize)
            return (validation, mayRetry && authAttempts == 0, s.hasProgressHandlers)
        }
        guard let (validation, mayRetryAuthentication, reports) = checked else { return }
        let sameOriginRetry = mayRetryAuthentication && sameOrigin(response.url, originalRequest.url)
        switch validation.verdict(for: response, mayRetryAuthentication: sameOriginRetry) {
        case .reject(let error):
            // A 503 or 429 may be retried (its Retry-After is in `serverResponse`).
            attemptFailed(transfer, error, cancelTransfer: true)
        case .awaitAuthenticationRetry:
            // The challenge (and the retried request) follows this response on Linux.
            state.withLock { _ = $0.modifyAttempt(of: transfer) { $0.awaitingAuthRetry = true } }
        case .accept(let expected):
            state.withLock { s in
                _ = s.modifyAttempt(of: transfer) { attempt in
                    // Room for the announced body up front (SDWebImage's initWithCapacity): the chunks are then
                    // copied once each. Capped, since the header may lie.
                    if expected > 0, attempt.buffer.isEmpty {
                        attempt.buffer = Data(capacity: min(expected, Self.maximumReservedBytes))
                    }
                    attempt.expectedSize = expected
                    attempt.lastReportedSize = 0
                }
                s.metrics.expectedBytes = expected
            }
            if reports { callers.reportProgress(0, expected) }
            callers.post([.imageDownloadReceiveResponse], object: self)
        }
    }

    func transfer(_ transfer: any TransportTransfer, didReceive data: Data) {
        data.withUnsafeBytes { receiveBody($0, data: data, from: transfer) }
    }

    /// The curl transport's buffer: copied straight into the attempt's buffer; a `Data` of the chunk is made
    /// only while the sniffer or progressive decoding needs one.
    func transfer(_ transfer: any TransportTransfer, didReceiveBytes bytes: UnsafeRawBufferPointer) {
        receiveBody(bytes, data: nil, from: transfer)
    }

    /// The one body path of both delivery methods. `data`: the chunk as a `Data` when it came as one.
    private func receiveBody(_ bytes: UnsafeRawBufferPointer, data: Data?, from transfer: any TransportTransfer) {
        enum Action {
            case drop, tooLarge(Int)
            case accept(report: (Int, Int)?, progressive: ProgressiveDecoding?, offset: Int)
        }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if let verdict = sniff(bytes, data: data, from: transfer), case .notAnImage(let what) = verdict {
            // Said at once, and the rest of the body is never fetched.
            finish(error: ImageDownloaderError.badImageData(.notAnImage(what)), cancelTransfer: true)
            return
        }
        let limit = settings.maximumResponseSize
        let now = deadlineMonitor.now()
        let action: Action = state.withLock { s in
            // Data keeps arriving after a cancel on some transports: dropped.
            guard let attempt = s.activeAttempt(of: transfer, now: now), !attempt.awaitingAuthRetry,
                  attempt.revalidated == nil  // [HTTP cache] the body of a 5xx answered from the cache: not kept
            else { return .drop }
            let (total, overflow) = attempt.buffer.count.addingReportingOverflow(bytes.count)
            if overflow || total > limit { return .tooLarge(overflow ? Int.max : total) }
            let offset = attempt.buffer.count
            if offset == 0 { s.metrics.firstByteAt = Date() }
            attempt.buffer.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            s.metrics.receivedBytes = total
            let expected = attempt.expectedSize > 0 ? max(attempt.expectedSize, total) : -1
            let interval = s.minimumProgressInterval
            var report: (Int, Int)?
            if s.hasProgressHandlers, expected <= 0 || interval <= 0
                || Double(total - max(0, attempt.lastReportedSize)) / Double(expected) >= interval || total >= expected {
                attempt.lastReportedSize = total
                report = (total, expected)
            }
            return .accept(report: report, progressive: s.progressive, offset: offset)
        }
        switch action {
        case .drop:
            return
        case .tooLarge(let size):
            finish(error: ImageDownloaderError.responseTooLarge(size), cancelTransfer: true)
        case .accept(let report, let progressive, let offset):
            if let (received, expected) = report { callers.reportProgress(received, expected) }
            progressive?.feed(data ?? Data(bytes), at: offset)
        }
    }

    /// While the first bytes are being checked (`BodySniffer`): feeds them, outside the lock (coders'
    /// `canDecode` is user code). Events of one transfer never overlap, so the sniffer is not fed twice at once.
    private func sniff(
        _ bytes: UnsafeRawBufferPointer, data: Data?, from transfer: any TransportTransfer
    ) -> BodySniffer.Verdict? {
        guard settings.sniffsBody else { return nil }
        guard var pending = state.withLock({ s in
            s.isCurrent(transfer) && s.attempt?.awaitingAuthRetry == false ? s.attempt?.sniffer : nil
        }) else { return nil }
        let coders = settings.codersManager
        // The sniffer keeps at most `maximumPrefix` bytes: only those are copied from a transport's buffer.
        let chunk = data ?? Data(UnsafeRawBufferPointer(rebasing: bytes.prefix(BodySniffer.maximumPrefix)))
        let verdict = pending.feed(chunk) { coders.coders }
        state.withLock { s in
            _ = s.modifyAttempt(of: transfer) { attempt in
                if attempt.sniffer != nil { attempt.sniffer = verdict == .undecided ? pending : nil }
            }
        }
        return verdict
    }

    func transfer(
        _ transfer: any TransportTransfer, willRedirect response: HTTPURLResponse, to request: URLRequest
    ) -> URLRequest? {
        let now = deadlineMonitor.now()
        let found: (Int, (any DownloadTransport)?)? = state.withLock { s in
            guard s.activeAttempt(of: transfer, now: now) != nil else { return nil }
            s.metrics.redirectCount += 1
            return (s.metrics.redirectCount, context.downloader?.transport ?? s.transport)
        }
        guard let (count, transport) = found else { return nil }
        let policy = RedirectPolicy(originalRequest: originalRequest) { transport?.unsupportedReason(for: $0) }
        switch policy.decide(request, count: count) {
        case .follow(let redirected):
            // Cookies of the 3xx stored and the Cookie header rebuilt for the new URL; cache validators dropped.
            return httpTransaction.redirect(redirected, response: response)
        case .refuse(let error):
            finish(error: error, cancelTransfer: true)
            return nil
        }
    }

    func transfer(_ transfer: any TransportTransfer, didReceive challenge: TransferChallenge) -> URLCredential? {
        let originalHost = originalRequest.url?.host
        let now = deadlineMonitor.now()
        let credential: URLCredential? = state.withLock { s in
            guard let attempt = s.activeAttempt(of: transfer, now: now) else { return nil }
            let credential = CredentialPolicy.credential(for: challenge, stored: s.credential, originalHost: originalHost)
            if credential != nil { attempt.authAttempts += 1 }
            return credential
        }
        // [HTTP cache] a shared cache stores a response to an authorized request only where RFC 9111 §3.5 allows.
        if credential != nil { httpTransaction.authenticationAnswered() }
        // nil: the transport makes the 401 the final response, and `didCompleteWith` reports it.
        return credential
    }

    func transfer(_ transfer: any TransportTransfer, didCompleteWith error: (any Error)?, metrics: TransferMetrics) {
        var bodySize = settings.maximumResponseSize &+ 1  // what a transport's size limit reports at least
        var redirects = 0
        let ended: (attempt: Attempt, cancelRequested: Bool, timeouts: (TransferTimeouts, TransferTimeouts.Running)?)?
            = state.withLock { s in
                guard let attempt = s.isCurrent(transfer) ? s.attempt : nil else { return nil }
                s.metrics.record(metrics, requestsBefore: s.requestsSent)
                s.requestsSent = s.metrics.attemptCount
                bodySize = max(bodySize, attempt.expectedSize, attempt.buffer.count)
                redirects = s.metrics.redirectCount
                // The transfer is over: decoding never counts against a timeout.
                return (attempt, s.cancelRequested, s.stopTimeouts())
            }
        guard let (attempt, cancelRequested, timeouts) = ended else { return }
        if let (clocks, running) = timeouts { clocks.stop(running) }
        if let error {
            attemptFailed(transfer, Self.downloaderError(
                for: error, cancelRequested: cancelRequested, bodySize: bodySize, redirectCount: redirects))
            return
        }
        let (response, codes) = state.withLock { ($0.response, $0.acceptableStatusCodes) }
        if let status = response?.statusCode, !ResponseValidation.isAcceptable(status: status, codes: codes) {
            // A 401 kept for an authentication retry that never came (or refused): the status is the answer.
            attemptFailed(transfer, ImageDownloaderError.invalidDownloadStatusCode(status))
            return
        }
        complete(attempt)
    }

    /// The one place a failed attempt is judged (its transfer ended with an error, an unacceptable status or a
    /// timeout): the retry policy either schedules the next attempt or ends the operation
    /// (ImageDownloaderOperation+Retry.swift). Nothing happens unless `transfer` is still the running one.
    private func attemptFailed(
        _ transfer: any TransportTransfer, _ error: ImageDownloaderError, cancelTransfer: Bool = false
    ) {
        // [HTTP cache] a stored response the server allows to be served when it errs wins over retrying.
        if serveStale(insteadOf: error, from: transfer, cancelTransfer: cancelTransfer) { return }
        retryOrFinish(transfer, error, cancelTransfer: cancelTransfer)
    }

    /// The transport's error as the callers see it: `ImageDownloaderError`s pass through, URL errors become
    /// `.network` (a cancel this operation asked for is `.cancelled`; a transport's own size limit,
    /// `.dataLengthExceedsMaximum`, is `.responseTooLarge(bodySize)` as the operation's check reports it; a
    /// transport's own redirect limit says how many redirects were followed, as the operation's does).
    static func downloaderError(
        for error: any Error, cancelRequested: Bool, bodySize: Int = 0, redirectCount: Int = 0
    ) -> ImageDownloaderError {
        if let already = error as? ImageDownloaderError { return already }
        if let urlError = error as? URLError {
            if urlError.code == .dataLengthExceedsMaximum { return .responseTooLarge(bodySize) }
            if urlError.code == .httpTooManyRedirects, urlError.userInfo[NetworkErrorText.UserInfoKey.redirectCount] == nil {
                var info = urlError.userInfo
                info[NetworkErrorText.UserInfoKey.redirectCount] = redirectCount
                return .network(URLError(.httpTooManyRedirects, userInfo: info))
            }
            return urlError.code == .cancelled && cancelRequested ? .cancelled : .network(urlError)
        }
        return .network(URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error]))
    }
}

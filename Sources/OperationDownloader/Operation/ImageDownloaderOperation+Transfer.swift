import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt: a transfer on the transport, and its events (`TransferClient`). The transport delivers the
/// events of a transfer one at a time, in order; each handler checks under the lock that the transfer is still
/// the running one (events of a cancelled transfer may still be running on another thread): each is one event
/// of `DownloadStateMachine` (StateMachine/), run through `modifyStateAndRunActions`.
extension ImageDownloaderOperation: TransferClient, TransferTimeoutClient {
    // MARK: - Starting an attempt

    /// The transport of this operation: the downloader's (from the context), else one on the session given to
    /// `init`, else one owning a session of its own (invalidated when the operation finishes).
    private func resolveTransport() -> any DownloadTransport {
        if let transport = transferOptions.plumbing?.resources.transport { return transport }
        if let resolved = modifyState({ $0.transport }) { return resolved }  // a later attempt
        let made: any DownloadTransport
        if let givenSession {
            made = URLSessionTransport(borrowing: givenSession)
        } else {
            made = URLSessionTransport(
                configuration: URLSessionTransport.standaloneConfiguration(idleTimeout: transferOptions.idleTimeout),
                delegateQueueName: "OperationDownloader.operation-session")
        }
        let owned = givenSession == nil
        modifyState { $0.adoptTransport(made, owned: owned) }
        return made
    }

    /// Starts one transfer of `request`: the first attempt, or a retry after its wait
    /// (ImageDownloaderOperation+Retry.swift), each seen by the callers as a start. `first` false: a later
    /// transfer of the same attempt (the HTTP cache's refetch, or the download asking again without `Range`
    /// after a `206` that did not fit), which the callers already saw start.
    func startAttempt(_ request: URLRequest, first: Bool = true) {
        // data: URLs are served by the package itself, on every transport (DataURLTransfer).
        let url = request.url
        let servesData = DataURLTransfer.serves(url)
        let transport = servesData ? nil : resolveTransport()
        // Refused before anything is sent: a request without a URL is a fatal error inside corelibs, and a host
        // the transport cannot reach fails with an unexplained code. (The downloader checked its requests already.)
        let refusal: ImageDownloaderError? = url.map { url in
            transferOptions.plumbing == nil ? transport?.unsupportedReason(for: url).map { .unsupportedOnPlatform($0) } : nil
        } ?? .invalidURL
        if let refusal {
            modifyStateAndRunActions {
                $0.markStarted(keepingEarlier: false)
                return $0.finish(.failure(refusal), cancelTransfer: false)
            }
            return
        }
        // [resume] After a body cut short, the request may ask for the rest (`Range`, `If-Range`).
        let (toSend, resuming) = modifyState { $0.requestForAttempt(request) }
        // [Observability] each request is observed, and carries the download's trace with a span id of its own.
        let sent = servesData ? toSend : observation?.requestBegins(toSend, url: url) ?? toSend
        let transferRequest = TransferRequest(
            urlRequest: sent, allowsInvalidCertificates: transferOptions.allowsInvalidCertificates,
            priority: TransferRequest.priority(for: queuePriority), idleTimeout: transferOptions.idleTimeout,
            maximumResponseSize: transferOptions.maximumResponseSize,
            timeoutIntervalIsUnset: transferOptions.plumbing?.timeoutIntervalIsUnset ?? false)
        let transfer: any TransportTransfer = if let transport {
            transport.makeTransfer(transferRequest, client: self)
        } else {
            DataURLTransfer(request: transferRequest, client: self)
        }
        let timeouts = TransferTimeouts(
            monitor: deadlineMonitor, idle: transferOptions.idleTimeout, maximumDuration: transferOptions.maximumDownloadDuration)
        let attempt = Attempt(
            transfer: transfer, timeouts: timeouts, sniffs: transferOptions.sniffsBody, request: request, resuming: resuming)
        // A cancel while starting ends the download and cancels the transfer (a URLSession task exists already).
        guard let reports = modifyStateAndRunActions({ $0.beginAttempt(attempt) }) else { return }
        // Decoders the body so far needs (none when they run already: a resumed body keeps its own).
        if transferOptions.mayDecodeIncrementally { startIncrementalDecoding() }
        if first {
            // [resume] An attempt asking for the rest reports the bytes kept (progress never goes back for it).
            if reports { callers.reportProgress(resuming?.from ?? 0, -1) }
            callers.post(.start, object: self)
        }
        // Held strongly: the monitor drops its registrations when the clocks stop (every attempt's end) or fire,
        // and a weak reference would give the operation a side table, each retain of it then the slow path.
        let running = timeouts.start(for: transfer, client: self)
        // The attempt ended during start (a cancel from the start progress callback): no registration stays.
        modifyStateAndRunActions { $0.clocksStarted(.init(timeouts: timeouts, running: running), for: transfer) }
        transfer.resume()
    }

    var hasProgressHandlers: Bool { modifyState { $0.hasProgressHandlers } }

    /// When `transfer` last reported an event (read by the deadline monitor when the idle deadline is due).
    func lastActivity(of transfer: any TransportTransfer) -> UInt64 {
        modifyState { $0.lastActivity(of: transfer) }
    }

    /// One of `transfer`'s clocks ran out (`TransferTimeouts`).
    func transfer(_ transfer: any TransportTransfer, timedOut error: URLError) {
        attemptFailed(transfer, ImageDownloaderError.network(error), cancelTransfer: true)
    }

    // MARK: - TransferClient

    func transfer(_ transfer: any TransportTransfer, didReceive response: TransportResponse) {
        let now = deadlineMonitor.now()
        guard modifyState({ $0.noteActivity(of: transfer, now: now) != nil }) else { return }
        var response = response
        var fromCache: CachedHTTPResponse?
        let serverResponse = response.statusCode == nil ? nil : response
        if let serverResponse {
            observation?.responseReceived(status: serverResponse.statusCode)
            // Cookies and the HTTP cache see the server's response, before any response modifier.
            let disposition = httpTransaction?.received(serverResponse)
                ?? HTTPCacheTransaction.dispositionWithoutCache(statusCode: serverResponse.statusCode)
            switch disposition {
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
        if let modifier = transferOptions.responseModifier {
            guard let modified = modifier.modifiedResponse(with: response.urlResponse) else {
                finish(error: ImageDownloaderError.invalidDownloadResponse, cancelTransfer: true)
                return
            }
            if modified !== response.urlResponse { response = TransportResponse(modified) }
        }
        let limit = transferOptions.maximumResponseSize
        let delivered = response
        let arrival = modifyStateAndRunActions {
            $0.responseArrived(
                delivered, server: serverResponse, fromCache: fromCache, from: transfer, maximumResponseSize: limit)
        }
        let checked: DownloadStateMachine.ResponseCheck
        switch arrival {
        case nil:
            return
        case .askAgain(let request)?:
            // [resume] A 206 that is not the rest of the bytes kept: dropped, and the whole asked for again.
            transfer.cancel()
            startAttempt(request, first: false)
            return
        case .validate(let check)?:
            checked = check
        }
        // [resume] A body that starts over gets new incremental decoders (the old ones hold the other bytes).
        if checked.restartsDecoding, transferOptions.mayDecodeIncrementally { startIncrementalDecoding() }
        let reports = checked.reportsProgress
        let sameOriginRetry = checked.mayRetryAuthentication && sameOrigin(response.url, originalRequest.url)
        switch checked.validation.verdict(for: checked.judged, mayRetryAuthentication: sameOriginRetry) {
        case .reject(let error):
            // A 503 or 429 may be retried (its Retry-After is in `serverResponse`).
            attemptFailed(transfer, error, cancelTransfer: true)
        case .awaitAuthenticationRetry:
            // The challenge (and the retried request) follows this response on Linux.
            modifyState { $0.awaitAuthenticationRetry(transfer) }
        case .accept(let expected):
            modifyState { $0.responseAccepted(transfer, expected: expected, maximumReserved: Self.maximumReservedBytes) }
            if reports { callers.reportProgress(checked.resumedFrom ?? 0, expected) }
            // [Observability] a 206 continuing the kept bytes: those bytes were not fetched again.
            if let kept = checked.resumedFrom { observation?.resumed(bytes: kept) }
            callers.post(.receiveResponse, object: self)
        }
    }

    func transfer(_ transfer: any TransportTransfer, didReceive data: Data) {
        data.withUnsafeBytes { receiveBody($0, data: data, from: transfer) }
    }

    /// The curl transport's buffer: copied straight into the attempt's buffer; a `Data` of the chunk is made
    /// only while the sniffer or incremental decoding needs one.
    func transfer(_ transfer: any TransportTransfer, didReceiveBytes bytes: UnsafeRawBufferPointer) {
        receiveBody(bytes, data: nil, from: transfer)
    }

    /// The one body path of both delivery methods. `data`: the chunk as a `Data` when it came as one.
    private func receiveBody(_ bytes: UnsafeRawBufferPointer, data: Data?, from transfer: any TransportTransfer) {
        guard !bytes.isEmpty else { return }
        if let verdict = sniff(bytes, data: data, from: transfer), case .notAnImage(let what) = verdict,
            callers.closeIfEveryCallerDecodes() {
            // Said at once, and the rest of the body is never fetched (a data-only caller would still want it).
            finish(error: ImageDownloaderError.badImageData(.notAnImage(what)), cancelTransfer: true)
            return
        }
        let limit = transferOptions.maximumResponseSize
        let now = deadlineMonitor.now()
        // Over the limit, the machine ends the download (`.responseTooLarge`).
        let verdict = modifyStateAndRunActions { $0.bytesArrived(bytes, from: transfer, now: now, limit: limit) }
        guard case .accept(let report, let incremental, let offset) = verdict else { return }
        if let (received, expected) = report { callers.reportProgress(received, expected) }
        incremental?.feed(data ?? Data(bytes), at: offset)
    }

    /// While the first bytes are being checked (`BodySniffer`): feeds them, outside the lock (coders'
    /// `canDecode` is user code). Events of one transfer never overlap, so the sniffer is not fed twice at once.
    private func sniff(
        _ bytes: UnsafeRawBufferPointer, data: Data?, from transfer: any TransportTransfer
    ) -> BodySniffer.Verdict? {
        guard transferOptions.sniffsBody else { return nil }
        guard var pending = modifyState({ $0.snifferToFeed(transfer) }) else { return nil }
        let coders = transferOptions.codersManager
        // The sniffer keeps at most `maximumPrefix` bytes: only those are copied from a transport's buffer.
        let chunk = data ?? Data(UnsafeRawBufferPointer(rebasing: bytes.prefix(BodySniffer.maximumPrefix)))
        let verdict = pending.feed(chunk) { coders.coders }
        let fed = pending
        modifyState { $0.snifferFed(transfer, fed, verdict: verdict) }
        return verdict
    }

    func transfer(
        _ transfer: any TransportTransfer, willRedirect response: HTTPURLResponse, to request: URLRequest
    ) -> URLRequest? {
        let now = deadlineMonitor.now()
        let downloaderTransport = transferOptions.plumbing?.resources.transport
        let found = modifyState {
            $0.redirectProposed(transfer, now: now, downloaderTransport: downloaderTransport)
        }
        guard let (count, transport) = found else { return nil }
        let policy = RedirectPolicy(originalRequest: originalRequest) { transport?.unsupportedReason(for: $0) }
        switch policy.decide(request, count: count) {
        case .follow(let redirected):
            // Cookies of the 3xx stored and the Cookie header rebuilt for the new URL; cache validators dropped.
            let next = httpTransaction?.redirect(redirected, response: response) ?? redirected
            return observation?.redirected(status: response.statusCode, to: next) ?? next
        case .refuse(let error):
            finish(error: error, cancelTransfer: true)
            return nil
        }
    }

    func transfer(_ transfer: any TransportTransfer, didReceive challenge: TransferChallenge) -> URLCredential? {
        let originalHost = originalRequest.url?.host
        let now = deadlineMonitor.now()
        let credential = modifyState {
            $0.challengeReceived(challenge, from: transfer, now: now, originalHost: originalHost)
        }
        // [HTTP cache] a shared cache stores a response to an authorized request only where RFC 9111 §3.5 allows.
        if credential != nil { httpTransaction?.authenticationAnswered() }
        // nil: the transport makes the 401 the final response, and `didCompleteWith` reports it.
        return credential
    }

    func transfer(_ transfer: any TransportTransfer, didCompleteWith error: (any Error)?, metrics: TransferMetrics) {
        let minimumBodySize = transferOptions.maximumResponseSize &+ 1  // what a transport's size limit reports at least
        // The transfer is over: its clocks stop (decoding never counts against a timeout).
        guard let ended = modifyStateAndRunActions({
            $0.transferCompleted(transfer, metrics: metrics, minimumBodySize: minimumBodySize)
        }) else { return }
        // A connection cut short is the same retryable `.networkConnectionLost` on every transport.
        let failure = ConnectionLoss.classify(error, body: ended.body, url: requestURL)
        observation?.requestEnded(error: failure, httpVersion: metrics.httpVersion)
        if let error = failure {
            attemptFailed(transfer, Self.downloaderError(
                for: error, cancelRequested: ended.cancelRequested, bodySize: ended.bodySize,
                redirectCount: ended.redirects))
            return
        }
        let (response, codes) = modifyState { ($0.response, $0.acceptableStatusCodes) }
        if let status = response?.statusCode, !ResponseValidation.isAcceptable(status: status, codes: codes) {
            // A 401 kept for an authentication retry that never came (or refused): the status is the answer.
            attemptFailed(transfer, ImageDownloaderError.invalidDownloadStatusCode(status))
            return
        }
        complete(ended.attempt)
    }

    /// The one place a failed attempt is judged (its transfer ended with an error, an unacceptable status or a
    /// timeout): the retry policy either schedules the next attempt or ends the operation
    /// (ImageDownloaderOperation+Retry.swift). Nothing happens unless `transfer` is still the running one.
    private func attemptFailed(
        _ transfer: any TransportTransfer, _ error: ImageDownloaderError, cancelTransfer: Bool = false
    ) {
        observation?.requestEnded(error: error, httpVersion: nil)
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

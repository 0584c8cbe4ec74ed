import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The curl-thread side of a transfer: starting each request, libcurl's callbacks, and what happens when a
// request ends (follow a redirect, answer a challenge, or complete).

/// Statuses after which a Location is a redirect (as URLSession: not 300, 304 or 305).
private let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
/// Bytes of a followed redirect's body read (and dropped) to keep the connection; beyond, it is closed.
private let redirectBodyLimit = 1 << 20
/// Backstops against a client that always follows or always answers: its own policy (the operation: 20
/// redirects, one credential) applies long before these.
private let maximumRedirects = 64
private let maximumCredentialRetries = 8

extension CurlTransfer {
    // MARK: - Driver commands

    /// The first request (the transfer got a slot).
    func curlStart(_ driver: CurlMultiDriver) {
        guard case .idle = stage else { return }
        guard isRunning else {
            stage = .done
            driver.releaseSlot()
            return
        }
        send(request.urlRequest, driver: driver)
    }

    /// `cancel()` or shutdown: stops the request at once (libcurl closes the connection if the response was
    /// not complete, so the server sees the client go away). No event follows.
    func curlCancel(_ driver: CurlMultiDriver) {
        switch stage {
        case .idle:
            stage = .done  // never started, or waiting for a slot (the driver dropped it): no slot held
        case .active(let exchange):
            driver.remove(exchange.easy)
            release(exchange, driver: driver)
            stage = .done
            driver.releaseSlot()
        case .done:
            break
        }
    }

    func curlResumeReading() {
        guard case .active(let exchange) = stage, exchange.paused else { return }
        guard !control.withLock({ $0.readingSuspended }) else { return }  // suspended again meanwhile
        exchange.paused = false
        driver.unpause(exchange.easy)  // may deliver the held chunk right here
    }

    func curlUpdatePriority() {
        guard case .active(let exchange) = stage else { return }
        exchange.easy.set(CCURLOPT_STREAM_WEIGHT, CurlRequestOptions.streamWeight(currentPriority))
    }

    // MARK: - Requests

    /// Sends `urlRequest` on a handle from the pool, or completes with the reason it cannot be sent.
    private func send(_ urlRequest: URLRequest, driver: CurlMultiDriver) {
        guard let url = urlRequest.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            end(CurlErrorMapping.urlError(.unsupportedURL, "only http and https URLs are supported",
                                          url: urlRequest.url), metrics: TransferMetrics(), driver: driver)
            return
        }
        if scheme == "https" && !driver.library.supportsTLS {
            end(CurlErrorMapping.urlError(.unsupportedURL, "this libcurl (\(driver.library.summary)) has no TLS",
                                          url: url), metrics: TransferMetrics(), driver: driver)
            return
        }
        guard let easy = driver.takeHandle() else {
            end(CurlErrorMapping.urlError(.unknown, "libcurl could not allocate a handle", url: url),
                metrics: TransferMetrics(), driver: driver)
            return
        }
        var settings = request
        settings.priority = currentPriority
        let exchange = CurlExchange(request: urlRequest, url: url, easy: easy)
        do {
            exchange.headers = try CurlRequestOptions.apply(
                urlRequest, url: url, transfer: settings, settings: driver.settings, easy: easy,
                callbacks: .init(userdata: Unmanaged.passUnretained(self).toOpaque()))
        } catch {
            driver.giveBack(easy)
            end(error, metrics: TransferMetrics(), driver: driver)
            return
        }
        if let proxyCredential {
            easy.set(CCURLOPT_PROXYAUTH, CCURLAUTH_BASIC)
            easy.set(CCURLOPT_PROXYUSERNAME, proxyCredential.user)
            easy.set(CCURLOPT_PROXYPASSWORD, proxyCredential.password)
        }
        stage = .active(exchange)
        guard driver.add(easy, for: self) else {
            release(exchange, driver: driver)
            end(CurlErrorMapping.urlError(.unknown, "libcurl refused the request", url: url),
                metrics: TransferMetrics(), driver: driver)
            return
        }
    }

    /// The exchange's handle left the multi handle: free its header list, return the handle.
    private func release(_ exchange: CurlExchange, driver: CurlMultiDriver) {
        exchange.releaseHeaders()
        driver.giveBack(exchange.easy)
    }

    /// The transfer is over: its slot goes to the next one, then the client hears the outcome.
    private func end(_ error: (any Error)?, metrics: TransferMetrics, driver: CurlMultiDriver) {
        stage = .done
        driver.releaseSlot()
        complete(error, metrics: metrics)
    }

    /// libcurl finished the current request (CURLMSG_DONE) with `result`.
    func curlRequestDidEnd(result: Int, driver: CurlMultiDriver) {
        guard case .active(let exchange) = stage else { return }
        let easy = exchange.easy
        let metrics = CurlMetrics.read(easy, requestsSent: exchange.requestsSent)
        let failure = result == CCURLE_OK ? nil : CurlErrorMapping.Failure(
            code: result, message: easy.errorMessage,
            osErrno: Int32(truncatingIfNeeded: easy.long(CCURLINFO_OS_ERRNO) ?? 0),
            verifyResult: easy.long(CCURLINFO_SSL_VERIFYRESULT) ?? 0, url: exchange.url)
        release(exchange, driver: driver)
        guard isRunning else {
            end(nil, metrics: metrics, driver: driver)  // cancelled meanwhile: `complete` delivers nothing
            return
        }
        if let next = exchange.redirect {
            // The client chose to follow at the head; the 3xx body (dropped) does not matter.
            redirectsFollowed += 1
            guard redirectsFollowed <= maximumRedirects else {
                end(CurlErrorMapping.urlError(.httpTooManyRedirects, "more than \(maximumRedirects) redirects",
                                              url: exchange.url), metrics: metrics, driver: driver)
                return
            }
            send(next, driver: driver)
            return
        }
        if failure == nil, exchange.abort == nil, let challenge = exchange.challenge,
           let retry = answer(challenge, of: exchange) {
            send(retry, driver: driver)
            return
        }
        guard isRunning else {
            end(nil, metrics: metrics, driver: driver)
            return
        }
        let error: (any Error)? = exchange.abort.map(exchange.abortError) ?? failure.map(CurlErrorMapping.urlError)
        end(error, metrics: metrics, driver: driver)
    }

    /// Asks the client for a credential: the request to retry with it, or nil (the 401/407 is final).
    private func answer(_ challenge: TransferChallenge, of exchange: CurlExchange) -> URLRequest? {
        guard serverAuthenticationFailures + proxyAuthenticationFailures < maximumCredentialRetries,
              let client = liveClient,
              let credential = client.transfer(self, didReceive: challenge),
              let user = credential.user, let password = credential.password, isRunning else { return nil }
        if challenge.isProxy {
            proxyAuthenticationFailures += 1
            proxyCredential = (user, password)
            return exchange.request
        }
        serverAuthenticationFailures += 1
        var retry = exchange.request
        let token = Data("\(user):\(password)".utf8).base64EncodedString()
        retry.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
        return retry
    }

    // MARK: - libcurl callbacks

    /// CURLOPT_PREREQFUNCTION: a request is about to be sent.
    func curlWillSendRequest() {
        if case .active(let exchange) = stage { exchange.requestsSent += 1 }
    }

    /// CURLOPT_HEADERFUNCTION. Returns the bytes taken, or 0 to stop the request.
    func curlDidReceiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        guard case .active(let exchange) = stage else { return 0 }
        if exchange.headComplete { return line.count }  // chunked trailers
        switch exchange.head.add(line) {
        case .partial, .interim, .malformed:
            return line.count
        case .complete:
            exchange.headComplete = true
            return headDidComplete(exchange) ? line.count : 0
        }
    }

    /// A final response head: a redirect for the client to judge, or the response (and maybe a challenge).
    private func headDidComplete(_ exchange: CurlExchange) -> Bool {
        guard let response = exchange.head.response(for: exchange.url) else { return true }
        let status = response.statusCode ?? 0
        if redirectStatuses.contains(status), let location = exchange.head.value("Location"),
           let target = URL(string: location, relativeTo: exchange.url)?.absoluteURL {
            guard let client = liveClient else { return false }
            let proposed = Self.redirectRequest(from: exchange.request, to: target, status: status)
            if let redirect = response.httpURLResponse,
               let next = client.transfer(self, willRedirect: redirect, to: proposed) {
                exchange.redirect = next
                return true
            }
            // Not followed: the 3xx is the final response, unless the client cancelled meanwhile.
        }
        if status == 401 || status == 407 {
            exchange.challenge = challenge(for: exchange, proxy: status == 407)
        }
        guard let client = liveClient else { return false }
        exchange.response = response
        client.transfer(self, didReceive: response)
        if response.expectedContentLength > Int64(request.maximumResponseSize) {
            // Stopped at the head; the client (which saw the length) has usually cancelled already.
            exchange.abort = .tooLarge(request.maximumResponseSize)
            return false
        }
        return isRunning
    }

    /// The Basic challenge of a 401 (the server) or 407 (the proxy), or nil when Basic is not offered.
    private func challenge(for exchange: CurlExchange, proxy: Bool) -> TransferChallenge? {
        let offered = exchange.head.basicChallenge(proxy: proxy)
        guard offered.found else { return nil }
        let origin = proxy ? driver.settings.proxy.url ?? exchange.url : exchange.url
        let secure = origin.scheme?.lowercased() == "https"
        return TransferChallenge(
            host: origin.host ?? "", port: origin.port ?? (secure ? 443 : 80),
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic, realm: offered.realm,
            previousFailureCount: proxy ? proxyAuthenticationFailures : serverAuthenticationFailures,
            isProxy: proxy)
    }

    /// CURLOPT_WRITEFUNCTION: decoded body bytes. Returns the bytes taken, CURL_WRITEFUNC_PAUSE to hold
    /// them (backpressure), or 0 to stop the request.
    func curlDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard case .active(let exchange) = stage else { return 0 }
        if exchange.redirect != nil {
            exchange.discardedBytes += bytes.count
            return exchange.discardedBytes > redirectBodyLimit ? 0 : bytes.count
        }
        let (client, suspended) = control.withLock { control in
            (control.phase == .running ? control.client : nil, control.readingSuspended)
        }
        guard let client else { return 0 }
        if suspended {
            exchange.paused = true
            return CCURL_WRITEFUNC_PAUSE
        }
        guard exchange.response != nil, bytes.baseAddress != nil else {
            exchange.abort = .noResponse
            return 0
        }
        exchange.receivedBytes += bytes.count
        client.transfer(self, didReceiveBytes: bytes)
        if exchange.receivedBytes > request.maximumResponseSize {
            // Delivered first, so the operation's own size check (which names the limit) sees it.
            exchange.abort = .tooLarge(request.maximumResponseSize)
            return 0
        }
        return bytes.count
    }

    /// The request a redirect proposes, as URLSession makes it: the same request at the new URL; a 303
    /// (and a 301/302 after POST) becomes a GET without body.
    static func redirectRequest(from request: URLRequest, to url: URL, status: Int) -> URLRequest {
        var next = request
        next.url = url
        let method = (request.httpMethod ?? "GET").uppercased()
        if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        return next
    }
}

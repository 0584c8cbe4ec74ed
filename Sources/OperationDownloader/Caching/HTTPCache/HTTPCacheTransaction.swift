import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One download's use of the HTTP cache and of cookies, so that the download operation makes a few calls
/// at fixed points instead of carrying the rules itself:
///
/// - `begin(acceptsStatus:)` in `start()`, before creating the task: serve from the cache (also a stored
///   error status, or stale while a background revalidation runs), fail, or send a request (with validators
///   and cookies added as the options ask);
/// - `redirect(_:response:)` in `willPerformHTTPRedirection`: cookies of the 3xx stored, the new request's
///   cookies chosen for its URL;
/// - `received(_:)` in `didReceive response`: cookies stored; a 304 to a revalidation becomes the stored
///   response, refreshed (or, matching no stored response, a request to fetch anew); a 5xx within
///   stale-if-error becomes the stale stored response; an error status the download rejects is stored
///   without its body when cacheable; a successful unsafe method invalidates; a 200 to HEAD freshens or
///   removes the stored GET response;
/// - `failed(_:)` when the transfer fails: the stale stored response within stale-if-error, or nil;
/// - `completed(_:data:)` in `didCompleteWithError` (no error, acceptable status): the body stored;
/// - `isCachedBody(_:)` before decoding: `.ignoreCachedResponse` and the bytes equal the cached ones →
///   `ImageDownloaderError.cacheNotModified`;
/// - `release()` when the operation releases its buffers.
///
/// Without `.useURLCache` (`useURLCache == false`) the cache is neither read nor written; without
/// `.handleCookies` no cookie is sent or stored.
final class HTTPCacheTransaction: @unchecked Sendable {  // `state` is lock-guarded (`Locked`); the rest is immutable
    /// What `start()` does.
    enum Start {
        /// No request: deliver this stored response (metrics: `cached.source`, `cached.isStale`). A status
        /// the download does not accept (a stored 404, a 504 for only-if-cached) fails with that status.
        case serveFromCache(CachedHTTPResponse)
        /// No request: fail with this error (`.returnCacheDataDontLoad` and nothing stored).
        case fail(URLError)
        /// Create the data task with this request.
        case send(URLRequest)
    }

    /// What `didReceive response` does.
    enum ResponseDisposition: Equatable {
        /// Validate and receive the response as usual.
        case proceed
        /// The stored body is the result (byte-identical) with this response: a 304 to this transaction's
        /// revalidation (`source == .revalidatedHTTPCache`), or an error status within stale-if-error
        /// (`isStale`). Any body that follows is not the result.
        case serveFromCache(CachedHTTPResponse)
        /// A 304 whose validator names no stored response: send this request (without the validators)
        /// instead, on a new transfer; this response and anything that follows it are dropped.
        case refetch(URLRequest)
        /// A 304 to the caller's own conditional request: report `ImageDownloaderError.notModified`.
        case notModified

        static func == (lhs: ResponseDisposition, rhs: ResponseDisposition) -> Bool {
            switch (lhs, rhs) {
            case (.proceed, .proceed), (.notModified, .notModified): return true
            case (.serveFromCache(let a), .serveFromCache(let b)): return a.key == b.key && a.data == b.data && a.source == b.source
            case (.refetch(let a), .refetch(let b)): return a == b
            default: return false
            }
        }
    }

    let cache: HTTPImageCache?
    let useURLCache: Bool
    let ignoreCachedResponse: Bool
    let handleCookies: Bool
    let cookieStorage: HTTPCookieStorage
    let revalidator: HTTPCacheRevalidator?

    struct State {
        var currentRequest: URLRequest
        /// The stored response this download may revalidate or fall back on (stale-if-error).
        var stored: CachedHTTPResponse?
        /// This transaction added the conditional fields: a 304 is its own to apply.
        var addedValidators = false
        var storesResponse = false
        var requestDate = Date()
        var cachedBody: Data?
        var acceptsStatus: @Sendable (Int) -> Bool = { (200..<300).contains($0) }
        /// The result is a stored response standing in for an error: nothing is stored.
        var servedStoredResponse = false
        var refetches = 0
        /// Fleet-wide single-flight on a shared cache (HTTPCacheTransaction+SharedFetch.swift).
        var sharedFetch = SharedFetchPhase.none
        /// The transport answered an authentication challenge with a credential (`authenticationAnswered()`).
        var answeredChallenge = false
    }

    /// The request as the downloader built it (before validators and cookies).
    let originalRequest: URLRequest
    /// Everything that changes during the download, one lock for all of it.
    let state: Locked<State>

    /// - Parameters:
    ///   - request: the request as the downloader built it (headers, modifier applied).
    ///   - cache: the downloader's `HTTPImageCache` (nil: no HTTP cache at all).
    ///   - cookieStorage: where `.handleCookies` reads and stores cookies (`HTTPCookieStorage.shared`, as on Apple).
    ///   - revalidator: starts background revalidations (stale-while-revalidate); nil revalidates in the
    ///     foreground instead.
    init(request: URLRequest, cache: HTTPImageCache?, useURLCache: Bool, ignoreCachedResponse: Bool,
         handleCookies: Bool, cookieStorage: HTTPCookieStorage = .shared, revalidator: HTTPCacheRevalidator? = nil) {
        self.originalRequest = request
        self.state = Locked(State(currentRequest: request))
        self.cache = cache
        self.useURLCache = useURLCache
        self.ignoreCachedResponse = ignoreCachedResponse
        self.handleCookies = handleCookies
        self.cookieStorage = cookieStorage
        self.revalidator = revalidator
    }

    /// The request to send, or a stored response to serve, or an error. Call once per attempt (a retry calls it
    /// again: cookies and the stored response are read afresh). `acceptsStatus` is the download's status
    /// validation: a response stored without its body is only served to a download that rejects its status.
    func begin(now: Date = Date(), acceptsStatus: @escaping @Sendable (Int) -> Bool = { (200..<300).contains($0) }) -> Start {
        var request = originalRequest
        if handleCookies { request = CookieHandling.addingCookies(to: request, from: cookieStorage, now: now) }
        state.withLock { state in
            state.currentRequest = request
            state.requestDate = now
            state.acceptsStatus = acceptsStatus
        }
        guard let cache, useURLCache else { return Self.beginWithoutCache(request) }
        let plan = cache.plan(for: request, useURLCache: true, now: now)
        switch plan {
        case .serveFromCache(let stored) where stored.hasBody || !acceptsStatus(stored.statusCode):
            state.withLock { state in state.cachedBody = stored.data }
            return .serveFromCache(stored)
        case .serveFromCache:
            // Stored without its body, and this download wants the body of that status: ask the server.
            if request.cachePolicy == .returnCacheDataDontLoad { return .fail(URLError(.resourceUnavailable)) }
            return load(request, stored: nil, storesResponse: true, cache: cache)
        case .serveStaleAndRevalidate(let stale, let stored):
            if stale.hasBody || !acceptsStatus(stale.statusCode), startRevalidation(of: stored, cache: cache) {
                state.withLock { state in state.cachedBody = stale.data }
                return .serveFromCache(stale)
            }
            // Nothing can revalidate in the background: revalidate now, as for any stale response.
            var conditional = request
            for (name, value) in stored.validators where conditional.value(forHTTPHeaderField: name) == nil {
                conditional.setValue(value, forHTTPHeaderField: name)
            }
            return load(conditional, stored: stored, storesResponse: true, cache: cache)
        case .unavailable:
            return .fail(URLError(.resourceUnavailable))
        case .gatewayTimeout:
            guard let url = request.url, let key = HTTPCacheKey.key(for: url),
                  let response = CachedHTTPResponse(
                    entry: HTTPCacheEntryFile(kind: .headersOnly, key: key, statusCode: 504, headers: HTTPHeaderFields(),
                                              varyValues: [:], requestDate: now, responseDate: now, body: Data()),
                    url: url, fileName: "") else { return .fail(URLError(.resourceUnavailable)) }
            return .serveFromCache(response)
        case .load(let toSend, let stored, let stores):
            return load(toSend, stored: stored, storesResponse: stores, cache: cache)
        }
    }

    private func load(_ toSend: URLRequest, stored: CachedHTTPResponse?, storesResponse: Bool, cache: HTTPImageCache) -> Start {
        // `.ignoreCachedResponse` compares with what is stored even when this policy does not read it.
        let body = ignoreCachedResponse ? (stored ?? cache.cachedResponse(for: toSend))?.data : nil
        let added = stored != nil && ["If-None-Match", "If-Modified-Since"].contains { field in
            toSend.value(forHTTPHeaderField: field) != nil && originalRequest.value(forHTTPHeaderField: field) == nil
        }
        state.withLock { state in
            state.currentRequest = toSend
            state.stored = stored
            state.addedValidators = added
            state.storesResponse = storesResponse
            state.cachedBody = body
        }
        return .send(toSend)
    }

    /// Claims the entry's revalidation and starts it; true when one is running (this one or another's).
    private func startRevalidation(of stale: CachedHTTPResponse, cache: HTTPImageCache) -> Bool {
        guard let revalidator else { return false }
        let name = stale.fileName
        // Already being revalidated (by another download): serve the stale response without a second request.
        guard cache.claimRevalidation(of: name) else { return true }
        // It revalidates the stored response itself: not the part a Range asked for, and not with the caller's
        // own validators (a 304 to those would refresh nothing).
        var request = originalRequest
        for field in ["Range", "If-Range", "If-None-Match", "If-Modified-Since"] { request.setValue(nil, forHTTPHeaderField: field) }
        let started = revalidator.start(request, cache, handleCookies) { cache.endRevalidation(of: name) }
        return started
    }

    /// What `stored` answers to the caller's request (its own fields, not the validators this transaction
    /// added): the whole, a part for a Range, or a 304 for its own validators.
    private func answer(from stored: CachedHTTPResponse) -> CachedHTTPResponse? {
        stored.answer(to: HTTPHeaderFields(request: originalRequest))
    }

    /// The request to follow a redirect with: cookies set by the 3xx are stored, and the Cookie header is
    /// rebuilt for the new URL (the original request's own Cookie value kept), so cookies of one host never
    /// travel to another. Conditional headers are dropped: they described the stored response of the old URL.
    func redirect(_ newRequest: URLRequest, response: HTTPURLResponse, now: Date = Date()) -> URLRequest {
        storeCookies(from: response)
        var request = newRequest
        // Back to the caller's own values (nil removes what this transaction added).
        for field in ["If-None-Match", "If-Modified-Since", "Cookie"] {
            request.setValue(originalRequest.value(forHTTPHeaderField: field), forHTTPHeaderField: field)
        }
        if handleCookies { request = CookieHandling.addingCookies(to: request, from: cookieStorage, now: now) }
        state.withLock { state in
            state.currentRequest = request
            state.stored = nil
            state.addedValidators = false
        }
        return request
    }

    /// `received(_:)` for a transport's response: Foundation's response is made only when cookies or the
    /// cache read it; otherwise only the status matters (a 304 is the caller's own).
    func received(_ response: TransportResponse, now: Date = Date()) -> ResponseDisposition {
        if handleCookies || mayStore, let http = response.httpURLResponse { return received(http, now: now) }
        let status = response.statusCode ?? 0
        let disposition = Self.dispositionWithoutCache(statusCode: status)
        settleSharedFetch(after: disposition, statusCode: status)
        return disposition
    }

    /// Call for every response (also error statuses: their cookies count too).
    func received(_ response: HTTPURLResponse, now: Date = Date()) -> ResponseDisposition {
        let disposition = plannedDisposition(response, now: now)
        settleSharedFetch(after: disposition, statusCode: response.statusCode)
        return disposition
    }

    private func plannedDisposition(_ response: HTTPURLResponse, now: Date) -> ResponseDisposition {
        storeCookies(from: response)
        let current = state.withLock { state in state }
        guard let cache, useURLCache else { return response.statusCode == 304 ? .notModified : .proceed }
        let request = current.currentRequest
        let method = (request.httpMethod ?? "GET").uppercased()
        if !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method), response.statusCode < 400 {
            cache.invalidate(after: response, to: request)
        }
        if method == "HEAD" {
            cache.freshen(withHEAD: response, for: request, requestDate: current.requestDate, responseDate: now)
        }
        if response.statusCode == 304 {
            guard current.addedValidators, let stored = current.stored else { return .notModified }
            if let refreshed = cache.refreshed(with: response, for: request, stored: stored, requestDate: current.requestDate,
                                               responseDate: now),
               let answer = answer(from: refreshed), answer.hasBody || !current.acceptsStatus(answer.statusCode) {
                return .serveFromCache(answer.served(at: now, source: .revalidatedHTTPCache))
            }
            return refetch(current)
        }
        if HTTPFreshness.errorStatusCodes.contains(response.statusCode), let stored = current.stored, stored.hasBody,
           stored.mayServeStaleOnError(for: HTTPHeaderFields(request: request), now: now)
            || Self.originUnavailable(response.statusCode, stored: stored), let answer = answer(from: stored) {
            state.withLock { state in state.servedStoredResponse = true }
            return .serveFromCache(answer.served(at: now, stale: true))
        }
        if current.storesResponse, !current.acceptsStatus(response.statusCode) {
            // The download stops at this header: keep the status (while fresh it is answered without a request).
            cache.store(response, data: nil, for: storedRequest(request, response: response),
                        requestDate: current.requestDate, responseDate: now, wait: false)
        }
        return .proceed
    }

    /// A 502, 503 or 504 says the origin cannot answer now: like a dropped connection, a stored success that
    /// allows stale use (no `must-revalidate`, `no-cache`) stands in for it, even without stale-if-error.
    private static func originUnavailable(_ statusCode: Int, stored: CachedHTTPResponse) -> Bool {
        HTTPFreshness.originUnavailableStatusCodes.contains(statusCode) && stored.statusCode < 400
            && HTTPFreshness.mayServeStaleWhenDisconnected(stored.rulesHeaders)
    }

    /// A 304 that matches no stored response (RFC 9111 §4.3.4): the same request without this transaction's
    /// validators. At most twice per download, then the 304 is reported.
    private func refetch(_ current: State) -> ResponseDisposition {
        guard current.refetches < 2 else { return .notModified }
        var request = current.currentRequest
        for field in ["If-None-Match", "If-Modified-Since"] {
            request.setValue(originalRequest.value(forHTTPHeaderField: field), forHTTPHeaderField: field)
        }
        state.withLock { state in
            state.currentRequest = request
            state.addedValidators = false
            state.refetches += 1
        }
        return .refetch(request)
    }

    /// The transfer failed with `error`: the stored response to deliver instead, or nil to report the error.
    /// Within stale-if-error (RFC 5861 §4) any failure but a cancel counts; without it, only a failure to
    /// reach the origin (RFC 9111 §4.2.4: a disconnected cache may serve stale), never past `must-revalidate`
    /// or `no-cache`.
    func failed(_ error: any Error, now: Date = Date()) -> CachedHTTPResponse? {
        let urlError = error as? URLError ?? URLError(.unknown)
        guard urlError.code != .cancelled else { return nil }
        let current = state.withLock { state in state }
        guard useURLCache, let stored = current.stored, stored.hasBody else { return nil }
        let request = HTTPHeaderFields(request: current.currentRequest)
        guard stored.mayServeStaleOnError(for: request, now: now)
            || (HTTPFreshness.isDisconnection(urlError) && HTTPFreshness.mayServeStaleWhenDisconnected(stored.rulesHeaders)),
              let answer = answer(from: stored) else { return nil }
        state.withLock { state in state.servedStoredResponse = true }
        return answer.served(at: now, stale: true)
    }

    /// Whether the request `begin` returned stores its response (a miss or a revalidation the policy stores).
    var sendsStoringRequest: Bool { state.withLock { state in state.storesResponse } }

    /// The download's status validation (as given to `begin`).
    func acceptsStatus(_ statusCode: Int) -> Bool {
        state.withLock { state in state.acceptsStatus }(statusCode)
    }

    /// The operation answered an authentication challenge with a credential: the response is one to an
    /// authorized request, which a shared cache stores only where RFC 9111 §3.5 allows.
    func authenticationAnswered() {
        state.withLock { state in state.answeredChallenge = true }
    }

    /// Whether `completed` can write to the cache at all (`.useURLCache` with a cache).
    var mayStore: Bool { useURLCache && cache != nil }

    // MARK: - Downloads without a transaction

    /// Whether a download needs a transaction: with neither an HTTP cache to use nor cookies to handle, there is
    /// nothing to read, add or store, and the download does without one (an object and a lock fewer per
    /// download, Docs/Transports.md).
    static func isNeeded(cache: HTTPImageCache?, useURLCache: Bool, handleCookies: Bool) -> Bool {
        handleCookies || (useURLCache && cache != nil)
    }

    /// `begin()` without a transaction: the request as it is, unless it may only be answered from a cache.
    static func beginWithoutCache(_ request: URLRequest) -> Start {
        // "Never load" with no cache to read from can only fail, as on Apple without a URLCache.
        request.cachePolicy == .returnCacheDataDontLoad ? .fail(URLError(.resourceUnavailable)) : .send(request)
    }

    /// `received(_:)` without a transaction: only the status matters (a 304 answers the caller's own validators).
    static func dispositionWithoutCache(statusCode: Int?) -> ResponseDisposition {
        statusCode == 304 ? .notModified : .proceed
    }

    /// Stores a complete response and its body (before any decryptor) when the policy allows.
    /// `authenticated`: the transport answered an authentication challenge for it (a shared cache stores it
    /// only where RFC 9111 §3.5 allows).
    func completed(_ response: HTTPURLResponse, data: Data, now: Date = Date(), authenticated: Bool = false) {
        defer { finishSharedFetch() }
        let current = state.withLock { state in state }
        guard current.storesResponse, !current.servedStoredResponse, useURLCache, let cache, response.statusCode != 304 else { return }
        cache.store(response, data: data, for: storedRequest(current.currentRequest, response: response),
                    requestDate: current.requestDate, responseDate: now, authenticated: authenticated || current.answeredChallenge)
    }

    /// `completed(_:data:)` for a transport's response: Foundation's response is made only when it is stored.
    func completed(_ response: TransportResponse, data: Data) {
        guard mayStore, sendsStoringRequest, let http = response.httpURLResponse else { return finishSharedFetch() }
        completed(http, data: data)
    }

    /// After a redirect the response belongs to the final URL, which is where it is stored.
    private func storedRequest(_ request: URLRequest, response: HTTPURLResponse) -> URLRequest {
        var stored = request
        if let finalURL = response.url { stored.url = finalURL }
        return stored
    }

    /// `.ignoreCachedResponse`: whether `data` equals the body that was cached before this download.
    func isCachedBody(_ data: Data) -> Bool {
        guard ignoreCachedResponse else { return false }
        return state.withLock { state in state.cachedBody } == data
    }

    /// Drops the stored body and response this transaction holds; the operation calls it before finishing
    /// (finished operations can linger in an OperationQueue).
    func release() {
        state.withLock { state in
            state.stored = nil
            state.cachedBody = nil
        }
        abandonSharedFetch()
    }

    private func storeCookies(from response: HTTPURLResponse) {
        guard handleCookies else { return }
        let request = state.withLock { state in state.currentRequest }
        CookieHandling.storeCookies(from: response, for: request, in: cookieStorage)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One download's use of the HTTP cache and of cookies, so that the download operation makes a few calls
/// at fixed points instead of carrying the rules itself:
///
/// - `begin()` in `start()`, before creating the task: serve from the cache, fail, or send a request (with
///   validators and cookies added as the options ask);
/// - `redirect(_:response:)` in `willPerformHTTPRedirection`: cookies of the 3xx stored, the new request's
///   cookies chosen for its URL;
/// - `received(_:)` in `didReceive response`: cookies stored; a 304 to a revalidation becomes the stored
///   response, refreshed;
/// - `completed(_:data:)` in `didCompleteWithError` (no error, acceptable status): the body stored;
/// - `isCachedBody(_:)` before decoding: `.ignoreCachedResponse` and the bytes equal the cached ones →
///   `ImageDownloaderError.cacheNotModified`;
/// - `release()` when the operation releases its buffers.
///
/// Without `.useURLCache` (`useURLCache == false`) the cache is neither read nor written; without
/// `.handleCookies` no cookie is sent or stored.
final class HTTPCacheTransaction: @unchecked Sendable {  // mutable state guarded by `lock`
    /// What `start()` does.
    enum Start {
        /// No request: decode and deliver this stored response (metrics: served from the cache).
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
        /// A 304 to this transaction's revalidation: the stored body is the result (byte-identical);
        /// treat the download as a success with this response and data. No body follows.
        case serveRevalidated(CachedHTTPResponse)
        /// A 304 that cannot be matched to a stored response: report `ImageDownloaderError.notModified`.
        case notModified

        static func == (lhs: ResponseDisposition, rhs: ResponseDisposition) -> Bool {
            switch (lhs, rhs) {
            case (.proceed, .proceed), (.notModified, .notModified): return true
            case (.serveRevalidated(let a), .serveRevalidated(let b)): return a.key == b.key && a.data == b.data
            default: return false
            }
        }
    }

    let cache: HTTPImageCache?
    let useURLCache: Bool
    let ignoreCachedResponse: Bool
    let handleCookies: Bool
    let cookieStorage: HTTPCookieStorage

    private let lock = NSLock()
    private let originalRequest: URLRequest
    private var currentRequest: URLRequest
    private var revalidating: CachedHTTPResponse?
    private var storesResponse = false
    private var requestDate = Date()
    private var cachedBody: Data?

    /// - Parameters:
    ///   - request: the request as the downloader built it (headers, modifier applied).
    ///   - cache: the downloader's `HTTPImageCache` (nil: no HTTP cache at all).
    ///   - cookieStorage: where `.handleCookies` reads and stores cookies (`HTTPCookieStorage.shared`, as on Apple).
    init(request: URLRequest, cache: HTTPImageCache?, useURLCache: Bool, ignoreCachedResponse: Bool,
         handleCookies: Bool, cookieStorage: HTTPCookieStorage = .shared) {
        self.originalRequest = request
        self.currentRequest = request
        self.cache = cache
        self.useURLCache = useURLCache
        self.ignoreCachedResponse = ignoreCachedResponse
        self.handleCookies = handleCookies
        self.cookieStorage = cookieStorage
    }

    /// The request to send, or a stored response to serve, or an error. Call once per attempt (a retry calls it
    /// again: cookies and the stored response are read afresh).
    func begin(now: Date = Date()) -> Start {
        var request = originalRequest
        if handleCookies { request = CookieHandling.addingCookies(to: request, from: cookieStorage, now: now) }
        guard let cache, useURLCache else {
            // "Never load" with no cache to read from can only fail, as on Apple without a URLCache.
            if request.cachePolicy == .returnCacheDataDontLoad { return .fail(URLError(.resourceUnavailable)) }
            lock.withLock { currentRequest = request; requestDate = now }
            return .send(request)
        }
        switch cache.plan(for: request, useURLCache: true, now: now) {
        case .serveFromCache(let stored):
            lock.withLock { cachedBody = stored.data }
            return .serveFromCache(stored)
        case .unavailable:
            return .fail(URLError(.resourceUnavailable))
        case .load(let toSend, let stored, let stores):
            // `.ignoreCachedResponse` compares with what is stored even when this policy does not read it.
            let body = ignoreCachedResponse ? (stored ?? cache.cachedResponse(for: request))?.data : nil
            lock.withLock {
                currentRequest = toSend
                revalidating = stored
                storesResponse = stores
                requestDate = now
                cachedBody = body
            }
            return .send(toSend)
        }
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
        lock.withLock {
            currentRequest = request
            revalidating = nil
        }
        return request
    }

    /// Call for every response (also error statuses: their cookies count too).
    func received(_ response: HTTPURLResponse, now: Date = Date()) -> ResponseDisposition {
        storeCookies(from: response)
        guard response.statusCode == 304 else { return .proceed }
        let (stored, request, sentAt) = lock.withLock { (revalidating, currentRequest, requestDate) }
        guard let cache, let stored,
              let refreshed = cache.refreshed(with: response, for: request, stored: stored, requestDate: sentAt, responseDate: now)
        else { return .notModified }
        return .serveRevalidated(refreshed)
    }

    /// Whether `completed` can write to the cache at all (`.useURLCache` with a cache).
    var mayStore: Bool { useURLCache && cache != nil }

    /// Stores a complete response and its body (before any decryptor) when the policy allows.
    func completed(_ response: HTTPURLResponse, data: Data, now: Date = Date()) {
        let (stores, request, sentAt) = lock.withLock { (storesResponse, currentRequest, requestDate) }
        guard stores, useURLCache, let cache, response.statusCode != 304 else { return }
        // After a redirect the body belongs to the final URL, which is where it is stored.
        var storedRequest = request
        if let finalURL = response.url { storedRequest.url = finalURL }
        cache.store(response, data: data, for: storedRequest, requestDate: sentAt, responseDate: now)
    }

    /// `.ignoreCachedResponse`: whether `data` equals the body that was cached before this download.
    func isCachedBody(_ data: Data) -> Bool {
        guard ignoreCachedResponse else { return false }
        return lock.withLock { cachedBody } == data
    }

    /// Drops the stored body and response this transaction holds; the operation calls it before finishing
    /// (finished operations can linger in an OperationQueue).
    func release() {
        lock.withLock {
            revalidating = nil
            cachedBody = nil
        }
    }

    private func storeCookies(from response: HTTPURLResponse) {
        guard handleCookies else { return }
        let request = lock.withLock { currentRequest }
        CookieHandling.storeCookies(from: response, for: request, in: cookieStorage)
    }
}

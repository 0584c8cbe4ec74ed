import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides what one request does with the cache: `.useURLCache`, `request.cachePolicy` (see
/// `HTTPCacheRequestPolicy`), the request's own Cache-Control (`no-store`, `no-cache`, `max-age`,
/// `max-stale`, `min-fresh`, `only-if-cached`), its method, and what is stored — which answers the request
/// whole, as a part (Range) or as a 304 (the caller's own validators): `CachedHTTPResponse.answer(to:)`.
struct HTTPCachePlanner {
    let cache: HTTPImageCache
    let request: URLRequest
    let useURLCache: Bool
    let now: Date

    func plan() -> HTTPCachePlan {
        // "Never load" when the cache may not be read can only fail, as on Apple without a URLCache.
        guard useURLCache else {
            return request.cachePolicy == .returnCacheDataDontLoad ? .unavailable : .load(request, revalidating: nil, storesResponse: false)
        }
        let policy = HTTPCacheRequestPolicy.resolve(cachePolicy: request.cachePolicy, useURLCache: true)
        let headers = HTTPHeaderFields(request: request)
        var request = request
        // A caller's bare tag (`If-None-Match: abc`, not an entity-tag) goes on quoted, as the origin will compare it.
        if let ifNoneMatch = headers["If-None-Match"] {
            let quoted = HTTPEntityTag.quotingBareTags(ifNoneMatch)
            if quoted != ifNoneMatch { request.setValue(quoted, forHTTPHeaderField: "If-None-Match") }
        }
        let directives = CacheControlDirectives(headers["Cache-Control"])
        let method = (request.httpMethod ?? "GET").uppercased()
        // Only GET is read (a successful unsafe method invalidates: the transaction). A POST's answer may be
        // stored for later GETs (RFC 9110 §9.3.3; `HTTPFreshness.storability` decides). A request's no-store
        // keeps the cache out of it entirely (RFC 9111 §5.2.1.5).
        if method != "GET" || directives.noStore {
            let stores = method == "POST" && !directives.noStore && policy.storesResponses
            return policy.readMode == .anyStoredDontLoad ? .unavailable : .load(request, revalidating: nil, storesResponse: stores)
        }
        // What storage cannot answer (a Range it does not hold, a stored part for a request of the whole) goes to
        // the origin as it is.
        let unanswerable: HTTPCachePlan = policy.readMode == .anyStoredDontLoad ? .unavailable
            : directives.onlyIfCached && policy.readMode == .protocolRules ? .gatewayTimeout
            : .load(request, revalidating: nil, storesResponse: policy.storesResponses)
        switch policy.readMode {
        case .none:
            var toSend = request
            if request.cachePolicy == .reloadIgnoringLocalAndRemoteCacheData {
                // "Remote" caches too: ask every cache on the way for a fresh answer.
                Self.setIfAbsent("Cache-Control", "no-cache", in: &toSend)
                Self.setIfAbsent("Pragma", "no-cache", in: &toSend)
            }
            return .load(toSend, revalidating: nil, storesResponse: policy.storesResponses)
        case .anyStoredElseLoad, .anyStoredDontLoad:
            guard let stored = cache.storedResponse(for: request) else { return unanswerable }
            guard let answer = stored.answer(to: headers) else { return unanswerable }
            return .serveFromCache(answer.served(at: now, stale: stored.use(for: HTTPHeaderFields(), now: now) != .fresh))
        case .alwaysRevalidate:
            guard let stored = cache.storedResponse(for: request), let answer = stored.answer(to: headers) else { return unanswerable }
            // RFC 8246: a fresh immutable response does not change, so a reload need not ask.
            if CacheControlDirectives(stored.headers["Cache-Control"]).immutable, stored.use(for: headers, now: now) == .fresh {
                return .serveFromCache(answer.served(at: now))
            }
            var toSend = request
            Self.setIfAbsent("Cache-Control", "max-age=0", in: &toSend)
            return conditionalLoad(toSend, stored: stored, storesResponse: policy.storesResponses)
        case .protocolRules:
            switch cache.lookup(for: request, now: now) {
            case .fresh(let stored):
                guard let answer = stored.answer(to: headers) else { return unanswerable }
                return .serveFromCache(answer.served(at: now))
            case .staleAccepted(let stored):
                guard let answer = stored.answer(to: headers) else { return unanswerable }
                return .serveFromCache(answer.served(at: now, stale: true))
            case .staleWhileRevalidate(let stored, _):
                guard let answer = stored.answer(to: headers) else { return unanswerable }
                if directives.onlyIfCached { return .serveFromCache(answer.served(at: now, stale: true)) }
                return .serveStaleAndRevalidate(answer.served(at: now, stale: true), stored: stored)
            case .stale(let stored, _):
                if directives.onlyIfCached { return .gatewayTimeout }
                guard stored.answer(to: headers) != nil else { return unanswerable }
                return conditionalLoad(request, stored: stored, storesResponse: policy.storesResponses)
            case .miss:
                return unanswerable
            }
        }
    }

    /// `request` with the stored response's validators added (fields the caller already set are kept).
    private func conditionalLoad(_ request: URLRequest, stored: CachedHTTPResponse, storesResponse: Bool) -> HTTPCachePlan {
        var conditional = request
        for (name, value) in stored.validators.sorted(by: { $0.key < $1.key }) {
            Self.setIfAbsent(name, value, in: &conditional)
        }
        return .load(conditional, revalidating: stored, storesResponse: storesResponse)
    }

    private static func setIfAbsent(_ name: String, _ value: String, in request: inout URLRequest) {
        if request.value(forHTTPHeaderField: name) == nil { request.setValue(value, forHTTPHeaderField: name) }
    }
}

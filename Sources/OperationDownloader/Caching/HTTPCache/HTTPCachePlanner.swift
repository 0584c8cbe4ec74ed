import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides what one request does with the cache: `.useURLCache`, `request.cachePolicy` (see
/// `HTTPCacheRequestPolicy`), the request's own Cache-Control (`no-store`, `no-cache`, `max-age`,
/// `max-stale`, `min-fresh`, `only-if-cached`), its method and Range, and what is stored.
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
        let directives = CacheControlDirectives(headers["Cache-Control"])
        // Only GET is read or stored (a successful unsafe method invalidates: the transaction); a request's
        // no-store keeps the cache out of it entirely (RFC 9111 §5.2.1.5).
        if (request.httpMethod ?? "GET").uppercased() != "GET" || directives.noStore {
            return policy.readMode == .anyStoredDontLoad ? .unavailable : .load(request, revalidating: nil, storesResponse: false)
        }
        // A Range request is never answered from a stored full response (and a 206 is never stored).
        if headers["Range"] != nil {
            return policy.readMode == .anyStoredDontLoad ? .unavailable
                : .load(request, revalidating: nil, storesResponse: policy.storesResponses)
        }
        switch policy.readMode {
        case .none:
            var toSend = request
            if request.cachePolicy == .reloadIgnoringLocalAndRemoteCacheData {
                // "Remote" caches too: ask every cache on the way for a fresh answer.
                Self.setIfAbsent("Cache-Control", "no-cache", in: &toSend)
                Self.setIfAbsent("Pragma", "no-cache", in: &toSend)
            }
            return .load(toSend, revalidating: nil, storesResponse: policy.storesResponses)
        case .anyStoredElseLoad:
            if let stored = cache.storedResponse(for: request) { return serve(stored) }
            return .load(request, revalidating: nil, storesResponse: policy.storesResponses)
        case .anyStoredDontLoad:
            if let stored = cache.storedResponse(for: request) { return serve(stored) }
            return .unavailable
        case .alwaysRevalidate:
            guard let stored = cache.storedResponse(for: request) else {
                return .load(request, revalidating: nil, storesResponse: policy.storesResponses)
            }
            // RFC 8246: a fresh immutable response does not change, so a reload need not ask.
            if CacheControlDirectives(stored.headers["Cache-Control"]).immutable, stored.use(for: headers, now: now) == .fresh {
                return .serveFromCache(stored.served(at: now))
            }
            var toSend = request
            Self.setIfAbsent("Cache-Control", "max-age=0", in: &toSend)
            return conditionalLoad(toSend, stored: stored, storesResponse: policy.storesResponses)
        case .protocolRules:
            switch cache.lookup(for: request, now: now) {
            case .fresh(let stored):
                return .serveFromCache(stored.served(at: now))
            case .staleAccepted(let stored):
                return .serveFromCache(stored.served(at: now, stale: true))
            case .staleWhileRevalidate(let stored, _):
                if directives.onlyIfCached { return .serveFromCache(stored.served(at: now, stale: true)) }
                return .serveStaleAndRevalidate(stored.served(at: now, stale: true))
            case .stale(let stored, _):
                if directives.onlyIfCached { return .gatewayTimeout }
                return conditionalLoad(request, stored: stored, storesResponse: policy.storesResponses)
            case .miss:
                if directives.onlyIfCached { return .gatewayTimeout }
                return .load(request, revalidating: nil, storesResponse: policy.storesResponses)
            }
        }
    }

    /// A stored response served whatever its age (`.returnCacheData...` policies).
    private func serve(_ stored: CachedHTTPResponse) -> HTTPCachePlan {
        .serveFromCache(stored.served(at: now, stale: stored.use(for: HTTPHeaderFields(), now: now) != .fresh))
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

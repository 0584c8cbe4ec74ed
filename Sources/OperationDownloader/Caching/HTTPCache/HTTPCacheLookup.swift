import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the cache holds for a request under RFC 9111 rules.
enum HTTPCacheLookup: Sendable {
    /// May be served without contacting the server.
    case fresh(CachedHTTPResponse)
    /// Stale, but the request's `max-stale` accepts it: may be served without contacting the server.
    case staleAccepted(CachedHTTPResponse)
    /// Stale within `stale-while-revalidate`: may be served at once, revalidated in the background.
    case staleWhileRevalidate(CachedHTTPResponse, validators: [String: String])
    /// Must be revalidated: send the request with `validators` added (empty when the response has none,
    /// in which case the request is simply sent again).
    case stale(CachedHTTPResponse, validators: [String: String])
    /// Nothing usable is stored.
    case miss
}

/// What the operation does for one request, combining `.useURLCache`, the request's cache policy and
/// Cache-Control, and the cache's contents (see `HTTPImageCache.plan(for:useURLCache:now:)`).
enum HTTPCachePlan: Sendable {
    /// Serve this stored response without any network request (decode it and call back as usual;
    /// metrics report the cache as the source). Its `Age` is the current one.
    case serveFromCache(CachedHTTPResponse)
    /// Serve this stale answer at once and revalidate `stored` (the response it comes from: the same, or the
    /// complete response a part or a 304 was made from) in the background (stale-while-revalidate).
    case serveStaleAndRevalidate(CachedHTTPResponse, stored: CachedHTTPResponse)
    /// Send `request` (which may carry If-None-Match / If-Modified-Since). `revalidating` is the stored
    /// response a 304 refers to (and the stand-in for stale-if-error); `storesResponse` says whether a
    /// storable answer is written to the cache.
    case load(URLRequest, revalidating: CachedHTTPResponse?, storesResponse: Bool)
    /// `.returnCacheDataDontLoad` and nothing stored: fail without a request
    /// (`URLError(.resourceUnavailable)`, as on Apple platforms).
    case unavailable
    /// The request's `Cache-Control: only-if-cached` and nothing usable stored: answer 504 without a
    /// request (RFC 9111 §5.2.1.7).
    case gatewayTimeout
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How one request uses the HTTP cache, from `.useURLCache` and the request's `cachePolicy`, with the
/// meaning each policy has on Apple platforms (where URLSession's cache honours them; on Linux it does not).
struct HTTPCacheRequestPolicy: Equatable, Sendable {
    /// What a stored response may be used for.
    enum ReadMode: Equatable, Sendable {
        /// The cache is not consulted.
        case none
        /// RFC 9111: fresh → served without network; stale → revalidated.
        case protocolRules
        /// Any stored response is revalidated, fresh or not (`.reloadRevalidatingCacheData`).
        case alwaysRevalidate
        /// Any stored response is served regardless of age; otherwise load (`.returnCacheDataElseLoad`).
        case anyStoredElseLoad
        /// Any stored response is served regardless of age; otherwise fail without loading
        /// (`.returnCacheDataDontLoad`).
        case anyStoredDontLoad
    }

    let readMode: ReadMode
    /// Whether a storable response that arrives is written to the cache.
    let storesResponses: Bool

    /// Without `.useURLCache` nothing is read or written. With it, `.reloadIgnoringLocalCacheData` (and
    /// `.reloadIgnoringLocalAndRemoteCacheData`) skip reading but still store what arrives, as NSURLCache does.
    static func resolve(cachePolicy: URLRequest.CachePolicy, useURLCache: Bool) -> HTTPCacheRequestPolicy {
        guard useURLCache else { return HTTPCacheRequestPolicy(readMode: .none, storesResponses: false) }
        switch cachePolicy {
        case .useProtocolCachePolicy:
            return HTTPCacheRequestPolicy(readMode: .protocolRules, storesResponses: true)
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return HTTPCacheRequestPolicy(readMode: .none, storesResponses: true)
        case .returnCacheDataElseLoad:
            return HTTPCacheRequestPolicy(readMode: .anyStoredElseLoad, storesResponses: true)
        case .returnCacheDataDontLoad:
            return HTTPCacheRequestPolicy(readMode: .anyStoredDontLoad, storesResponses: false)
        case .reloadRevalidatingCacheData:
            return HTTPCacheRequestPolicy(readMode: .alwaysRevalidate, storesResponses: true)
        @unknown default:
            return HTTPCacheRequestPolicy(readMode: .protocolRules, storesResponses: true)
        }
    }
}

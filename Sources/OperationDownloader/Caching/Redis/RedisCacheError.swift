import Foundation

/// Why `HTTPImageCache(redis:)` cannot make a Redis cache. A server that is down or refuses the password is
/// not an error here: the cache then degrades (downloads go to the origin, one warning; see Docs/Scaling.md).
public enum RedisCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL's scheme is not `redis` (or `rediss`).
    case unsupportedScheme(String)
    /// The URL is not `redis://[user:password@]host:port[/db]` (the reason says what is wrong).
    case invalidURL(String)
    /// hiredis could not be loaded (the loader's reasons); install it to use a Redis cache.
    case clientLibraryMissing(String)
    /// `rediss://` (TLS) was asked for, and the Redis client here has no TLS.
    case tlsUnavailable

    public var description: String {
        switch self {
        case .unsupportedScheme(let scheme):
            return "unsupported cache URL scheme \"\(scheme)\": use redis://[user:password@]host:port[/db]"
        case .invalidURL(let reason):
            return "invalid Redis URL: \(reason); use redis://[user:password@]host:port[/db]"
        case .clientLibraryMissing(let reasons):
            return "the Redis client library (hiredis) cannot be loaded (\(reasons)); \(HiredisLibrary.installHint)"
        case .tlsUnavailable:
            return "rediss:// (TLS) is not available: the Redis client (hiredis through dlopen) is used without TLS here; "
                + "use redis:// on a trusted network or a TLS tunnel (see Docs/Scaling.md)"
        }
    }
}

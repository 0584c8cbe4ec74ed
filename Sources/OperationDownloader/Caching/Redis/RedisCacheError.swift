import Foundation

/// Why `HTTPImageCache(redis:)` cannot make a Redis cache. A server that is down or refuses the password is
/// not an error here: the cache then degrades (downloads go to the origin, one warning; see Docs/Scaling.md).
public enum RedisCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL's scheme is not `redis`, `redis-sentinel` or `redis-cluster` (or their TLS forms).
    case unsupportedScheme(String)
    /// The URL is not one of the forms `HTTPImageCache(redis:)` reads (the reason says what is wrong).
    case invalidURL(String)
    /// `rediss://` (TLS) was asked for, and the Redis client here has no TLS.
    case tlsUnavailable

    static let forms = "redis://[user:password@]host:port[/db], redis-sentinel://[user:password@]host:port[,host:port…]/mastername[/db] "
        + "or redis-cluster://[user:password@]host:port[,host:port…]"

    public var description: String {
        switch self {
        case .unsupportedScheme(let scheme):
            return "unsupported cache URL scheme \"\(scheme)\": use \(Self.forms)"
        case .invalidURL(let reason):
            return "invalid Redis URL: \(reason); use \(Self.forms)"
        case .tlsUnavailable:
            return "rediss:// (TLS) is not available: the package's Redis client has no TLS; "
                + "use redis:// on a trusted network or a TLS tunnel (see Docs/Scaling.md)"
        }
    }
}

import Foundation

/// The key of a cached response: lower-cased scheme and host, the effective port, the path and the query,
/// exactly as sent (percent-encoding kept; no fragment, no user info). Only http and https are cached.
enum HTTPCacheKey {
    static func key(for url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.percentEncodedHost?.lowercased(), !host.isEmpty else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        var key = "\(scheme)://\(host):\(port)\(path)"
        if let query = components.percentEncodedQuery { key += "?" + query }
        return key
    }

    /// The entry file name for `key`: 64 hex digits, so no key can name a path outside the cache directory.
    static func fileName(for key: String) -> String {
        HTTPCacheHashing.sha256Hex(key) + HTTPCacheDirectory.entryExtension
    }
}

import Foundation

/// The key of a cached response: lower-cased scheme and host, the effective port, the path and the query,
/// exactly as sent (percent-encoding kept; no fragment, no user info). Only http and https are cached.
enum HTTPCacheKey {
    static func key(for url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true), let origin = origin(of: components)
        else { return nil }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        var key = origin + path
        if let query = components.percentEncodedQuery { key += "?" + query }
        return key
    }

    /// Lower-cased scheme and host with the effective port ("https://example.com:443"), or nil for a URL
    /// the cache does not handle.
    static func origin(of url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: true).flatMap(origin(of:))
    }

    private static func origin(of components: URLComponents) -> String? {
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.percentEncodedHost?.lowercased(), !host.isEmpty else { return nil }
        return "\(scheme)://\(host):\(components.port ?? (scheme == "https" ? 443 : 80))"
    }

    /// The entry file name for `key`: 64 hex digits, so no key can name a path outside the cache directory.
    static func fileName(for key: String) -> String {
        HTTPCacheHashing.sha256Hex(key) + HTTPCacheDirectory.entryExtension
    }

    /// The entry file of one variant of `key` (responses with `Vary`): the generation of the URL's variant
    /// index and the normalised values of the varied request fields (absent fields marked as such) name it.
    static func variantFileName(for key: String, generation: String, values: [String: String], fields: [String]) -> String {
        var text = key + "\n" + generation
        for field in fields.sorted() {
            text += "\n" + field + (values[field].map { "=" + $0 } ?? "\u{0}")
        }
        return fileName(for: text)
    }
}

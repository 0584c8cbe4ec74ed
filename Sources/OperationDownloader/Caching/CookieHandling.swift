import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookies for `.handleCookies`, done by the package because URLSession on Linux ignores
/// `httpShouldHandleCookies`: the downloader's session has cookies disabled, and the operation adds the
/// Cookie header from the storage before sending and stores Set-Cookie back after the response, only for
/// requests with the option.
///
/// The selection (RFC 6265 §5.4) is done here rather than trusted to `HTTPCookieStorage.cookies(for:)`,
/// which on Linux ignores the cookie's path.
enum CookieHandling {
    /// The cookies `storage` holds for `url` that may be sent to it: domain and path match, Secure ones only
    /// over https, unexpired; longest paths first (RFC 6265 §5.4 ordering).
    static func cookies(for url: URL, in storage: HTTPCookieStorage, now: Date = Date()) -> [HTTPCookie] {
        guard let host = url.host?.lowercased(), let scheme = url.scheme?.lowercased() else { return [] }
        let path = requestPath(url)
        let candidates = storage.cookies(for: url) ?? []
        let matching = candidates.filter { cookie in
            if cookie.isSecure && scheme != "https" { return false }
            if let expiry = cookie.expiresDate, expiry <= now { return false }
            return domainMatches(host: host, cookieDomain: cookie.domain) && pathMatches(path, cookiePath: cookie.path)
        }
        return matching.enumerated().sorted { lhs, rhs in
            lhs.element.path.count != rhs.element.path.count
                ? lhs.element.path.count > rhs.element.path.count : lhs.offset < rhs.offset
        }.map(\.element)
    }

    /// The Cookie header value for `url`, or nil when no cookie applies.
    static func cookieHeader(for url: URL, in storage: HTTPCookieStorage, now: Date = Date()) -> String? {
        let selected = cookies(for: url, in: storage, now: now)
        guard !selected.isEmpty else { return nil }
        return selected.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// `request` with the stored cookies for its URL added to its Cookie header (after any Cookie value the
    /// request already carries, e.g. from a request modifier).
    static func addingCookies(to request: URLRequest, from storage: HTTPCookieStorage, now: Date = Date()) -> URLRequest {
        guard let url = request.url, let stored = cookieHeader(for: url, in: storage, now: now) else { return request }
        var result = request
        if let existing = request.value(forHTTPHeaderField: "Cookie"), !existing.isEmpty {
            result.setValue(existing + "; " + stored, forHTTPHeaderField: "Cookie")
        } else {
            result.setValue(stored, forHTTPHeaderField: "Cookie")
        }
        return result
    }

    /// Stores the cookies `response` sets (Set-Cookie, possibly folded into one comma-separated field) in
    /// `storage`, subject to its accept policy with the request's main document URL (else its URL).
    static func storeCookies(from response: HTTPURLResponse, for request: URLRequest, in storage: HTTPCookieStorage) {
        guard let url = response.url ?? request.url else { return }
        var setCookieFields: [String: String] = [:]
        for (key, value) in response.allHeaderFields {
            guard let name = key as? String, name.lowercased() == "set-cookie", let text = value as? String else { continue }
            setCookieFields["Set-Cookie"] = setCookieFields["Set-Cookie"].map { $0 + ", " + text } ?? text
        }
        guard !setCookieFields.isEmpty else { return }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: setCookieFields, for: url)
        guard !cookies.isEmpty else { return }
        storage.setCookies(cookies, for: url, mainDocumentURL: request.mainDocumentURL ?? url)
    }

    /// RFC 6265 §5.1.3: the host equals the cookie's domain, or is a subdomain of a domain cookie.
    static func domainMatches(host: String, cookieDomain: String) -> Bool {
        let domain = cookieDomain.lowercased()
        if domain.hasPrefix(".") {
            let bare = String(domain.dropFirst())
            return host == bare || host.hasSuffix(domain)
        }
        return host == domain
    }

    /// RFC 6265 §5.1.4: the cookie's path is the request path or a prefix of it ending at a "/".
    static func pathMatches(_ requestPath: String, cookiePath: String) -> Bool {
        let cookiePath = cookiePath.isEmpty ? "/" : cookiePath
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }

    private static func requestPath(_ url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which redirects are followed, and what the redirected request carries (Docs/Downloader.md).
struct RedirectPolicy {
    /// Redirects followed before failing with `URLError.httpTooManyRedirects` (browsers use about 20).
    static let maximumRedirects = 20

    let originalRequest: URLRequest
    /// The transport's own limits (an IPv6 literal host with URLSession on Linux).
    let unsupportedReason: (URL) -> String?

    enum Decision {
        case follow(URLRequest)
        case refuse(ImageDownloaderError)
    }

    /// For the `count`-th redirect to `request`: too many hops, a scheme other than http(s) (never a local file,
    /// FTP, data: ...: corelibs resolves a host-less `file:`/`data:` Location as a path on the same server) or
    /// a host the transport cannot load is refused. Otherwise the downloader's headers are kept, but the
    /// Authorization header never goes to another origin.
    func decide(_ request: URLRequest, count: Int) -> Decision {
        if count > Self.maximumRedirects {
            var info: [String: Any] = [NetworkErrorText.UserInfoKey.redirectCount: Self.maximumRedirects]
            if let url = originalRequest.url { info[NSURLErrorFailingURLErrorKey] = url }
            return .refuse(.network(URLError(.httpTooManyRedirects, userInfo: info)))
        }
        let scheme = request.url?.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let url = request.url, url.host?.isEmpty == false else {
            return .refuse(.network(URLError(.unsupportedURL)))
        }
        if let reason = unsupportedReason(url) { return .refuse(.unsupportedOnPlatform(reason)) }
        var redirected = request
        let crossesOrigin = !sameOrigin(url, originalRequest.url)
        for (field, value) in originalRequest.allHTTPHeaderFields ?? [:]
        where redirected.value(forHTTPHeaderField: field) == nil {
            if crossesOrigin && field.caseInsensitiveCompare("Authorization") == .orderedSame { continue }
            redirected.setValue(value, forHTTPHeaderField: field)
        }
        if crossesOrigin { redirected.setValue(nil, forHTTPHeaderField: "Authorization") }
        return .follow(redirected)
    }
}

/// When the operation answers an authentication challenge (Docs/Downloader.md): with its credential, once
/// (`previousFailureCount == 0`), and only to the host it was asked for; otherwise the 401 is final.
enum CredentialPolicy {
    static func credential(
        for challenge: TransferChallenge, stored: URLCredential?, originalHost: String?
    ) -> URLCredential? {
        guard challenge.previousFailureCount == 0, let stored, !challenge.isProxy,
              challenge.host == originalHost else { return nil }
        return stored
    }
}

/// Same scheme, host and port: credentials may be sent.
func sameOrigin(_ a: URL?, _ b: URL?) -> Bool {
    guard let a, let b else { return false }
    func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) }
    return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && port(a) == port(b)
}

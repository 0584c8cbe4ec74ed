import Foundation

/// Which proxy the curl transport uses (`ImageDownloaderConfiguration.proxy`).
///
/// The default, `.environment`, reads `http_proxy`, `https_proxy` (or `HTTPS_PROXY`), `all_proxy` and
/// `no_proxy` exactly as libcurl and the `curl` command do. `URLSession` on Linux ignores this value (it has
/// its own, partial, reading of the same variables; Docs/Linux.md).
public struct ImageDownloaderProxyConfiguration: Sendable, Equatable {
    enum Mode: Sendable, Equatable {
        case environment
        case direct
        case proxy(URL)
    }

    let mode: Mode

    /// Hosts reached directly with `.proxy(_:bypassing:)`: host names (a name also matches its subdomains),
    /// IP addresses, or "*" for every host, as in `no_proxy`.
    public let bypassHosts: [String]

    /// `http_proxy`/`https_proxy`/`no_proxy` from the environment, as libcurl reads them (the default).
    public static let environment = ImageDownloaderProxyConfiguration(mode: .environment, bypassHosts: [])

    /// No proxy, whatever the environment says.
    public static let direct = ImageDownloaderProxyConfiguration(mode: .direct, bypassHosts: [])

    /// Every request through `url` ("http://proxy:3128", "https://...", "socks5h://..."; credentials may
    /// be written in it: "http://user:password@proxy:3128"), except to `bypassHosts`. The environment is
    /// ignored.
    public static func proxy(_ url: URL, bypassing bypassHosts: [String] = []) -> ImageDownloaderProxyConfiguration {
        ImageDownloaderProxyConfiguration(mode: .proxy(url), bypassHosts: bypassHosts)
    }

    private init(mode: Mode, bypassHosts: [String]) {
        self.mode = mode
        self.bypassHosts = bypassHosts
    }

    /// The proxy URL when one is set explicitly.
    public var url: URL? {
        if case .proxy(let url) = mode { return url }
        return nil
    }
}

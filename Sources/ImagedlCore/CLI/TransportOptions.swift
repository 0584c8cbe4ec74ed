import Foundation
import OperationDownloader

/// `--transport curl|urlsession`.
public enum TransportName: String, Equatable, Sendable, CaseIterable {
    case curl
    case urlsession
}

/// The transport flags of the download command: `--transport`, `--insecure`, `--cacert FILE`, `--proxy URL`.
/// They only set configuration values (Docs/Options.md); the downloader does the rest.
enum TransportOptions {
    static func parseTransport(_ value: String) throws(UsageError) -> TransportName {
        guard let name = TransportName(rawValue: value.lowercased()) else {
            throw UsageError("--transport needs curl or urlsession, not '\(value)'")
        }
        return name
    }

    static func parseCACert(_ value: String) throws(UsageError) -> String {
        guard !value.isEmpty else { throw UsageError("--cacert needs a PEM file") }
        return value
    }

    /// An absolute proxy URL with a host ("http://proxy:3128", "socks5h://host:1080").
    static func parseProxy(_ value: String) throws(UsageError) -> URL {
        guard let url = URL(string: value), url.scheme != nil, let host = url.host, !host.isEmpty else {
            throw UsageError("--proxy needs a URL like http://proxy:3128, not '\(value)'")
        }
        return url
    }

    /// --cacert and --proxy configure the curl transport only: refused with --transport urlsession.
    static func validate(_ options: DownloadOptions) throws(UsageError) {
        guard options.transport == .urlsession else { return }
        if options.caFile != nil { throw UsageError("--cacert needs the curl transport (URLSession on Linux reads only the system store)") }
        if options.proxy != nil { throw UsageError("--proxy needs the curl transport") }
    }

    /// The transport a run uses: the one asked for, else curl where libcurl loads, else URLSession.
    static func resolvedTransport(_ options: DownloadOptions) -> ImageDownloaderTransport {
        switch options.transport {
        case .curl: return .curl
        case .urlsession: return .urlSession
        case nil: return ImageDownloaderTransport.curl.isAvailable ? .curl : .urlSession
        }
    }

    /// Sets the configuration values the flags stand for.
    static func apply(_ options: DownloadOptions, to configuration: inout ImageDownloaderConfiguration) {
        configuration.transport = resolvedTransport(options)
        if let caFile = options.caFile { configuration.tls.caFile = caFile }
        if let proxy = options.proxy { configuration.proxy = .proxy(proxy) }
    }
}

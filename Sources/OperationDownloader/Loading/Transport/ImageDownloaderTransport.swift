import Foundation

/// Which engine carries a downloader's HTTP exchanges (Docs/Options.md).
///
/// - `.urlSession`: Foundation's `URLSession` (on Linux, swift-corelibs-foundation over libcurl). The default on
///   Apple platforms (the only one there) and on Linux where libcurl cannot be loaded.
/// - `.curl`: libcurl's multi interface driven by the package itself, loaded at run time with
///   `dlopen("libcurl.so.4")`: HTTP/2 multiplexing, TLS control (custom CA, pinned keys, per-request
///   `.allowInvalidSSLCertificates`), proxies, IPv6 literal hosts and real transfer metrics. `isAvailable` is
///   false where the library cannot be loaded; downloads on it then fail with `.unsupportedOnPlatform`.
public struct ImageDownloaderTransport: Sendable, Equatable, CustomStringConvertible {
    enum Kind: String, Sendable {
        case urlSession
        case curl
    }

    let kind: Kind

    /// Foundation's `URLSession`.
    public static let urlSession = ImageDownloaderTransport(kind: .urlSession)
    /// libcurl's multi interface, loaded with `dlopen`: the default on Linux where it loads.
    public static let curl = ImageDownloaderTransport(kind: .curl)

    /// What a configuration that names no transport uses: `.curl` on Linux where libcurl loads, else `.urlSession`.
    ///
    /// Not URLSession on Linux because corelibs' URLSession can end the process there: it traps on a response head
    /// cut before its end ("Transfer completed, but there's no response") and crashes now and then over HTTP/2
    /// (Docs/Linux.md counts it); the curl transport reports both as errors. A downloader that names no transport
    /// but has a custom `operationClass` or `sessionConfiguration` gets URLSession: those are URLSession's
    /// (Docs/Options.md).
    public static var platformDefault: ImageDownloaderTransport {
        #if canImport(FoundationNetworking)
        return curl.isAvailable ? .curl : .urlSession
        #else
        return .urlSession
        #endif
    }

    /// Whether this transport can run here (libcurl loads for `.curl`; `.urlSession` always can).
    public var isAvailable: Bool {
        switch kind {
        case .urlSession: return true
        case .curl: return CurlAvailability.unavailableReason == nil
        }
    }

    /// Why the transport cannot run here ("install libcurl4 ..."), or nil when it can.
    public var unavailableReason: String? {
        switch kind {
        case .urlSession: return nil
        case .curl: return CurlAvailability.unavailableReason
        }
    }

    public var description: String { kind.rawValue }
}

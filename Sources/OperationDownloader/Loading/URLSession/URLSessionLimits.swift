import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What URLSession cannot load on this platform, said before any request is made.
enum URLSessionLimits {
    /// Why URLSession cannot load `url` here, or nil when it can.
    ///
    /// corelibs Foundation (Linux) fails every IPv6 literal host with error -1000 (bad URL): `URL.host` is "::1"
    /// while libcurl's parsed host is "[::1]", and `_EasyHandle.set(url:)` refuses the mismatch
    /// ("URLSession and curl did not agree on URL host") before any connection is made.
    static func unsupportedReason(for url: URL) -> String? {
        #if canImport(FoundationNetworking)
        // An IPv6 literal is bracketed: a byte scan first (`String.contains` is Foundation's string search on
        // Linux, and `URL.host` percent-decodes).
        var text = url.absoluteString
        guard text.withUTF8({ $0.contains(UInt8(ascii: "[")) }) else { return nil }
        if let host = url.host, host.utf8.contains(UInt8(ascii: ":")) {
            return "URLSession on Linux (corelibs Foundation) cannot load IPv6 literal hosts such as [\(host)] "
                + "(it fails every such request with error -1000); use ImageDownloaderConfiguration.transport = .curl"
        }
        #endif
        return nil
    }
}

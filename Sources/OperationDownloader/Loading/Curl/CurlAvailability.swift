import CCurl
import Decoding

/// libcurl as the curl transport sees it: loaded once per process with `dlopen("libcurl.so.4")` (through the
/// package's one library loader, `DynamicLibrary`), its version and features read with `curl_version_info`.
struct CurlLibraryInfo: Sendable, Equatable {
    /// "7.88.1".
    var version: String
    /// 0xXXYYZZ, as `LIBCURL_VERSION_NUM`.
    var versionNumber: UInt32
    /// "OpenSSL/3.0.11" (nil without TLS).
    var sslVersion: String?
    var nghttp2Version: String?
    var brotliVersion: String?
    var supportsHTTP2: Bool
    var supportsIPv6: Bool
    var supportsTLS: Bool
    var supportsBrotli: Bool
    var supportsZstd: Bool
    var supportsGzip: Bool
    var supportsHTTPSProxy: Bool

    /// "libcurl 7.88.1 (OpenSSL/3.0.11; HTTP2, IPv6, brotli, gzip)", for logs and `imagedl --version`.
    var summary: String {
        let features = [
            supportsHTTP2 ? "HTTP2" : nil, supportsIPv6 ? "IPv6" : nil, supportsBrotli ? "brotli" : nil,
            supportsZstd ? "zstd" : nil, supportsGzip ? "gzip" : nil,
        ].compactMap { $0 }
        let tls = sslVersion ?? "no TLS"
        return "libcurl \(version) (\(tls); \(features.joined(separator: ", ")))"
    }
}

/// Whether libcurl can be loaded (`dlopen("libcurl.so.4")`), and if not, why.
///
/// FoundationNetworking links the same library, so on a machine where `URLSession` works it is present;
/// a minimal container may lack it. Nothing is linked at build time: a missing or too old library makes
/// `ImageDownloaderTransport.curl.isAvailable` false, never a crash or a build failure.
enum CurlAvailability {
    /// The soname the transport loads.
    static let soname = "libcurl.so.4"

    /// The loaded library, or why it cannot be used. Loaded on first use, once per process (`curl_global_init`
    /// runs here, before any transfer).
    static let library: Result<CurlLibraryInfo, CurlLibraryUnavailable> = load(soname)

    /// Why `.curl` cannot run here, or nil when it can.
    static var unavailableReason: String? {
        if case .failure(let failure) = library { return failure.description }
        return nil
    }

    /// Opens `soname` and checks its version (7.80.0 or newer: `curl_multi_poll`/`curl_multi_wakeup` and the
    /// pre-request callback). Internal for the tests, which also try a library that does not exist.
    static func load(_ soname: String) -> Result<CurlLibraryInfo, CurlLibraryUnavailable> {
        DynamicLibrary.load(soname, as: CurlLibraryInfo.self) { library in
            var reason = [CChar](repeating: 0, count: 512)
            guard ccurl_load(library.handle, &reason, reason.count) == 0 else {
                let text = reason.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                return .failure(LibraryUnavailable(soname: soname, reason: text))
            }
            return .success(versionInfo())
        }.mapError { CurlLibraryUnavailable(soname: $0.soname, reason: $0.reason) }
    }

    /// What the loaded library reports about itself.
    private static func versionInfo() -> CurlLibraryInfo {
        var raw = ccurl_version()
        ccurl_version_info(&raw)
        let features = raw.features
        func has(_ bit: Int) -> Bool { features & Int32(truncatingIfNeeded: bit) != 0 }
        return CurlLibraryInfo(
            version: raw.version.map { String(cString: $0) } ?? "unknown",
            versionNumber: raw.version_num,
            sslVersion: raw.ssl_version.map { String(cString: $0) },
            nghttp2Version: raw.nghttp2_version.map { String(cString: $0) },
            brotliVersion: raw.brotli_version.map { String(cString: $0) },
            supportsHTTP2: has(CCURL_VERSION_HTTP2),
            supportsIPv6: has(CCURL_VERSION_IPV6),
            supportsTLS: has(CCURL_VERSION_SSL),
            supportsBrotli: has(CCURL_VERSION_BROTLI),
            supportsZstd: has(CCURL_VERSION_ZSTD),
            supportsGzip: has(CCURL_VERSION_LIBZ),
            supportsHTTPSProxy: has(CCURL_VERSION_HTTPS_PROXY))
    }
}

/// Why libcurl cannot be used: not installed, or too old.
struct CurlLibraryUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    let soname: String
    let reason: String

    var description: String {
        "\(soname) cannot be loaded (\(reason)); install libcurl4: apt-get install libcurl4"
    }
}

import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sets up an easy handle for one request: URL, method, headers, callbacks, timeouts, TLS, proxy.
///
/// libcurl does no more than move bytes here: no redirects (`CURLOPT_FOLLOWLOCATION` stays off), no
/// authentication of its own beyond credentials written in a URL, no cookie engine, no cache. The
/// operation applies those rules through the transport seam.
enum CurlRequestOptions {
    /// The callbacks' user pointer: the transfer (retained by the driver while its handle is in the multi).
    struct Callbacks {
        var userdata: UnsafeMutableRawPointer
    }

    /// Configures `easy` (freshly reset) for `request`. Returns the header list, which must outlive the
    /// request (`ccurl_slist_free_all` once the handle left the multi), or throws when libcurl refuses an
    /// option (a header with a line break, an unusable proxy URL).
    static func apply(
        _ request: URLRequest, url: URL, transfer: TransferRequest, settings: CurlTransportSettings,
        easy: CurlEasyHandle, callbacks: Callbacks
    ) throws(URLError) -> UnsafeMutablePointer<ccurl_slist>? {
        easy.errorBuffer[0] = 0
        easy.set(CCURLOPT_ERRORBUFFER, pointer: easy.errorBuffer)
        easy.set(CCURLOPT_NOSIGNAL, 1)
        easy.set(CCURLOPT_PROTOCOLS, CCURLPROTO_HTTP | CCURLPROTO_HTTPS)
        guard easy.set(CCURLOPT_URL, url.absoluteString) == 0 else {
            throw CurlErrorMapping.urlError(.badURL, "libcurl cannot use the URL \(url.absoluteString)", url: url)
        }
        ccurl_easy_setopt_data_callback(easy.handle, Int32(CCURLOPT_WRITEFUNCTION), curlWriteCallback)
        easy.set(CCURLOPT_WRITEDATA, pointer: callbacks.userdata)
        ccurl_easy_setopt_data_callback(easy.handle, Int32(CCURLOPT_HEADERFUNCTION), curlHeaderCallback)
        easy.set(CCURLOPT_HEADERDATA, pointer: callbacks.userdata)
        ccurl_easy_setopt_prereq_callback(easy.handle, Int32(CCURLOPT_PREREQFUNCTION), curlPrereqCallback)
        easy.set(CCURLOPT_PREREQDATA, pointer: callbacks.userdata)

        easy.set(CCURLOPT_HTTP_VERSION, CCURL_HTTP_VERSION_2TLS)
        // Every encoding this libcurl decodes (gzip, deflate, br, zstd), decoded before the write callback.
        easy.set(CCURLOPT_ACCEPT_ENCODING, "")
        easy.set(CCURLOPT_BUFFERSIZE, settings.receiveBufferSize)
        easy.set(CCURLOPT_TCP_KEEPALIVE, 1)
        easy.set(CCURLOPT_SUPPRESS_CONNECT_HEADERS, 1)

        // Timeouts: the operation enforces the idle timeout and maximumDownloadDuration precisely; these are
        // libcurl's backstops (a connect that takes longer than the idle timeout is idle time too), 5 s later than
        // the operation's own, so the operation's timer fires first on a machine that is not overloaded.
        let idle = TransportBackstop.timeout(idle: transfer.idleTimeout, margin: TransportBackstop.curlMargin)
        easy.set(CCURLOPT_CONNECTTIMEOUT_MS, Int(min(idle * 1000, Double(Int32.max)).rounded(.up)))
        easy.set(CCURLOPT_LOW_SPEED_LIMIT, 1)
        easy.set(CCURLOPT_LOW_SPEED_TIME, Int(min(idle, 86_400).rounded(.up)))

        let secure = url.scheme?.lowercased() == "https"
        if secure {
            // Wait for a connection that may multiplex (HTTP/2) rather than open another one.
            easy.set(CCURLOPT_PIPEWAIT, 1)
        }
        easy.set(CCURLOPT_STREAM_WEIGHT, streamWeight(transfer.priority))
        applyTLS(settings.tls, allowsInvalidCertificates: transfer.allowsInvalidCertificates, easy: easy)
        try applyProxy(settings.proxy, easy: easy, url: url)
        applyMethod(request, easy: easy)
        return try headerList(request, easy: easy, url: url)
    }

    private static func isSafeHeaderText(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0 }
    }

    /// TransferRequest.priority (0...1) as an HTTP/2 stream weight (1...256).
    static func streamWeight(_ priority: Float) -> Int {
        let clamped = priority.isFinite ? min(max(priority, 0), 1) : 0.5
        return 1 + Int((clamped * 255).rounded())
    }

    private static func applyTLS(_ tls: ImageDownloaderTLSConfiguration, allowsInvalidCertificates: Bool, easy: CurlEasyHandle) {
        if allowsInvalidCertificates {
            // `.allowInvalidSSLCertificates`, this request only: libcurl never reuses a connection made without
            // verification for a request that verifies (the TLS settings are part of its connection match).
            easy.set(CCURLOPT_SSL_VERIFYPEER, 0)
            easy.set(CCURLOPT_SSL_VERIFYHOST, 0)
        }
        if let caFile = tls.caFile {
            easy.set(CCURLOPT_CAINFO, caFile)
            easy.set(CCURLOPT_CAPATH, pointer: nil)  // the file instead of the system store
        }
        if let pins = tls.curlPinnedPublicKey {
            easy.set(CCURLOPT_PINNEDPUBLICKEY, pins)
        }
    }

    private static func applyProxy(_ proxy: ImageDownloaderProxyConfiguration, easy: CurlEasyHandle, url: URL) throws(URLError) {
        switch proxy.mode {
        case .environment:
            break  // libcurl reads http_proxy, https_proxy, all_proxy and no_proxy itself
        case .direct:
            easy.set(CCURLOPT_PROXY, "")
        case .proxy(let proxyURL):
            guard easy.set(CCURLOPT_PROXY, proxyURL.absoluteString) == 0 else {
                throw CurlErrorMapping.urlError(.badURL, "libcurl cannot use the proxy \(proxyURL.absoluteString)", url: url)
            }
            easy.set(CCURLOPT_NOPROXY, proxy.bypassHosts.joined(separator: ","))
        }
    }

    private static func applyMethod(_ request: URLRequest, easy: CurlEasyHandle) {
        let method = (request.httpMethod ?? "GET").uppercased()
        let body = request.httpBody
        switch method {
        case "GET" where body == nil:
            break
        case "HEAD":
            easy.set(CCURLOPT_NOBODY, 1)
        default:
            if let body {
                easy.set(CCURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
                _ = body.withUnsafeBytes { easy.set(CCURLOPT_COPYPOSTFIELDS, pointer: $0.baseAddress) }
            }
            if method != "POST" || body == nil {
                easy.set(CCURLOPT_CUSTOMREQUEST, method)
            }
        }
    }

    /// The request's headers as a curl list ("Name: value"; "Name;" for an empty value). libcurl's own
    /// defaults for a header the request sets are replaced; "Expect:" turns off 100-continue for bodies.
    private static func headerList(_ request: URLRequest, easy: CurlEasyHandle, url: URL) throws(URLError) -> UnsafeMutablePointer<ccurl_slist>? {
        var list: UnsafeMutablePointer<ccurl_slist>?
        var failed = false
        func append(_ line: String) {
            guard !failed else { return }
            if let next = line.withCString({ ccurl_slist_append(list, $0) }) {
                list = next
            } else {
                failed = true
            }
        }
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            // A line break (or NUL) would let a value inject another header, or a request: refuse it. Bytes,
            // not Characters: this runs for every header of every request.
            if name.isEmpty || !isSafeHeaderText(name) || !isSafeHeaderText(value) {
                ccurl_slist_free_all(list)
                throw CurlErrorMapping.urlError(.badURL, "the request has an invalid header \(name)", url: url)
            }
            append(value.isEmpty ? name + ";" : name + ": " + value)
        }
        if request.httpBody != nil { append("Expect:") }
        if failed {
            ccurl_slist_free_all(list)
            throw CurlErrorMapping.urlError(.unknown, "out of memory for the request headers", url: url)
        }
        if let list { easy.set(CCURLOPT_HTTPHEADER, pointer: list) }
        return list
    }
}

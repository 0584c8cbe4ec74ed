import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Who one request goes to, as OpenTelemetry's HTTP client attributes name it: `http.request.method` (a known
/// method, else `_OTHER`), `server.address` (the URL's host as written), `server.port` (explicit, else the
/// scheme's).
struct RequestTarget: Sendable, Hashable {
    let method: String
    let host: String
    let port: Int

    /// `url`: the request's, read once by the caller (each read of `URLRequest.url` bridges in corelibs).
    init(_ request: URLRequest, url: URL?) {
        method = Self.method(request.httpMethod)
        (host, port) = Self.hostAndPort(url.flatMap { Self.authority($0.absoluteString) }, url: url)
    }

    /// The host and port of `authority` (read from `url`'s text), or what Foundation says when it is nil.
    static func hostAndPort(_ authority: (host: String, port: Int?, secure: Bool)?, url: URL?) -> (host: String, port: Int) {
        guard let authority else { return hostAndPort(url) }
        return (authority.host, authority.port ?? (authority.secure ? 443 : 80))
    }

    /// What Foundation says: the raw host (percent-decoding or lower-casing it costs more than the rest of the
    /// report) and the port, explicit or the scheme's.
    static func hostAndPort(_ url: URL?) -> (host: String, port: Int) {
        (url?.host(percentEncoded: true) ?? "", url?.port ?? (url?.scheme?.lowercased() == "https" ? 443 : 80))
    }

    /// The host and port of `scheme://[userinfo@]host[:port][/?#...]`, read from the URL's text in one pass over
    /// its UTF-8 bytes (asking the URL for its host and then its port parses it twice; Docs/Benchmarks.md has the
    /// cost). nil for anything else (no authority, an IP-literal host, a port that is not a number): Foundation
    /// answers those.
    static func authority(_ text: String) -> (host: String, port: Int?, secure: Bool)? {
        var text = text
        // Contiguous UTF-8 first: a URL's text may be bridged, and walking a bridged string's UTF-8 view is slow.
        return text.withUTF8 { authority(bytes: $0) }.map { ($0.host, $0.port, $0.secure) }
    }

    /// The authority's parts and where it ends (the length of `scheme://authority`, the URL's origin).
    static func authority(bytes: UnsafeBufferPointer<UInt8>) -> (host: String, port: Int?, secure: Bool, end: Int)? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else { return nil }
        let secure = colon == 5 && bytes[0] | 0x20 == UInt8(ascii: "h") && bytes[1] | 0x20 == UInt8(ascii: "t")
            && bytes[2] | 0x20 == UInt8(ascii: "t") && bytes[3] | 0x20 == UInt8(ascii: "p") && bytes[4] | 0x20 == UInt8(ascii: "s")
        // One pass to the end of the authority: the host starts after its last "@" and ends at the next ":".
        var hostStart = colon + 3
        var portColon = -1
        var end = hostStart
        scan: while end < bytes.count {
            switch bytes[end] {
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): break scan
            case UInt8(ascii: "@"):
                hostStart = end + 1
                portColon = -1
            case UInt8(ascii: ":"):
                if portColon < 0 { portColon = end }
            default: break
            }
            end += 1
        }
        let hostEnd = portColon < 0 ? end : portColon
        guard hostEnd > hostStart, bytes[hostStart] != UInt8(ascii: "[") else { return nil }
        let host = String(decoding: UnsafeBufferPointer(rebasing: bytes[hostStart..<hostEnd]), as: UTF8.self)
        guard portColon >= 0, portColon + 1 < end else { return (host, nil, secure, end) }
        guard end - portColon - 1 <= 5 else { return nil }
        var port = 0
        for i in (portColon + 1)..<end {
            let digit = bytes[i] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            port = port * 10 + Int(digit)
        }
        return (host, port, secure, end)
    }

    init(method: String, host: String, port: Int) {
        self.method = method
        self.host = host
        self.port = port
    }

    /// OpenTelemetry's known methods; anything else is `_OTHER` (a bounded label).
    static func method(_ text: String?) -> String {
        switch text {
        case nil, "GET": "GET"
        case "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "QUERY": text ?? "GET"
        default: "_OTHER"
        }
    }
}

/// How one request ended: the labels `http_client_request_duration_seconds` adds to its endpoint's.
struct RequestOutcome: Hashable, Sendable {
    /// 0: no response.
    let status: Int
    /// "": none.
    let errorType: String
    /// "": unknown.
    let protocolVersion: String
}

/// One method, `server_address` and port of a downloader: its `http_client_active_requests` gauge and its
/// request-duration histograms by outcome. The last outcome's histogram is kept at hand: most requests of an
/// endpoint end alike, so a report is usually a comparison, not a dictionary lookup.
final class RequestEndpoint: Sendable {
    /// The target the endpoint was found under (`serverAddress` may be `_other` for it).
    let target: RequestTarget
    let serverAddress: String
    let active: any ImageDownloaderMeterHandler
    private let sink: any ImageDownloaderMetricsSink
    private let timers = Locked<Timers>(Timers())

    private struct Timers {
        var last: (outcome: RequestOutcome, timer: any ImageDownloaderTimerHandler)?
        var all: [RequestOutcome: any ImageDownloaderTimerHandler] = [:]
    }

    init(target: RequestTarget, serverAddress: String, sink: any ImageDownloaderMetricsSink) {
        self.target = target
        self.serverAddress = serverAddress
        self.sink = sink
        active = sink.makeMeter(label: MetricName.activeRequests, dimensions: Self.server(target, serverAddress))
    }

    /// The port of `_other`'s endpoints: none is reported (`server_port` absent).
    static let noPort = -1

    private static func server(_ target: RequestTarget, _ serverAddress: String) -> [(String, String)] {
        var dimensions = [("http_request_method", target.method), ("server_address", serverAddress)]
        if target.port != noPort { dimensions.append(("server_port", String(target.port))) }
        return dimensions
    }

    /// The duration histogram of requests of this endpoint that ended with `outcome`.
    func timer(_ outcome: RequestOutcome) -> any ImageDownloaderTimerHandler {
        if let known = timers.withLock({ timers -> (any ImageDownloaderTimerHandler)? in
            if let last = timers.last, last.outcome == outcome { return last.timer }
            guard let found = timers.all[outcome] else { return nil }
            timers.last = (outcome, found)
            return found
        }) { return known }
        var dimensions = Self.server(target, serverAddress)
        if outcome.status > 0 { dimensions.append(("http_response_status_code", String(outcome.status))) }
        if !outcome.errorType.isEmpty { dimensions.append(("error_type", outcome.errorType)) }
        if !outcome.protocolVersion.isEmpty { dimensions.append(("network_protocol_version", outcome.protocolVersion)) }
        let made = sink.makeTimer(label: MetricName.requestDuration, dimensions: dimensions)
        return timers.withLock { timers in
            let timer = timers.all[outcome] ?? made
            timers.all[outcome] = timer
            timers.last = (outcome, timer)
            return timer
        }
    }
}

/// A downloader's request endpoints, bounded: the first `limit` servers (host and port) keep their names as
/// `server_address` and `server_port`, later ones share `_other`'s portless endpoints (a crawler meets hosts
/// and ports without end). The last endpoint used is kept at hand.
final class RequestEndpoints: Sendable {
    let addresses: ServerAddressLabels
    private let sink: any ImageDownloaderMetricsSink
    private let table = Locked<Table>(Table())

    private struct Table {
        var last: RequestEndpoint?
        /// The text up to the end of the authority (`scheme://host:port`) of the last URL resolved to `last`.
        var lastOrigin: [UInt8] = []
        /// By target, with `_other` (no port) past the limit: never more than `limit + 1` servers per method.
        var all: [RequestTarget: RequestEndpoint] = [:]
    }

    init(limit: Int, sink: any ImageDownloaderMetricsSink) {
        addresses = ServerAddressLabels(limit: limit)
        self.sink = sink
    }

    /// The endpoint of `request` (`url`: its URL, read once by the caller). A URL with the last one's origin
    /// (`scheme://authority`, byte for byte) and method is the last one's endpoint without being parsed: a
    /// downloader mostly fetches from the same few servers.
    func endpoint(for request: URLRequest, url: URL?) -> RequestEndpoint {
        let method = RequestTarget.method(request.httpMethod)
        guard let url else { return endpoint(for: RequestTarget(request, url: nil)) }
        var text = url.absoluteString
        return text.withUTF8 { bytes in
            if let known = table.withLock({ table -> RequestEndpoint? in
                guard let last = table.last, last.target.method == method, Self.has(origin: table.lastOrigin, bytes) else { return nil }
                return last
            }) { return known }
            let parsed = RequestTarget.authority(bytes: bytes)
            let (host, port) = RequestTarget.hostAndPort(parsed.map { ($0.host, $0.port, $0.secure) }, url: url)
            let endpoint = endpoint(for: RequestTarget(method: method, host: host, port: port))
            if let parsed {
                let origin = Array(UnsafeBufferPointer(rebasing: bytes[..<parsed.end]))
                table.withLock { table in
                    table.last = endpoint
                    table.lastOrigin = origin
                }
            }
            return endpoint
        }
    }

    /// `text` begins with `origin` and its authority ends there.
    private static func has(origin: [UInt8], _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !origin.isEmpty, text.count >= origin.count else { return false }
        if text.count > origin.count {
            let next = text[origin.count]
            guard next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#") else { return false }
        }
        return origin.withUnsafeBufferPointer { origin in
            guard let a = origin.baseAddress, let b = text.baseAddress else { return false }
            return memcmp(a, b, origin.count) == 0
        }
    }

    func endpoint(for target: RequestTarget) -> RequestEndpoint {
        if let known = table.withLock({ table -> RequestEndpoint? in
            if let last = table.last, last.target == target { return last }
            guard let found = table.all[target] else { return nil }
            table.last = found
            table.lastOrigin = []
            return found
        }) { return known }
        let address = addresses.label(target.host, port: target.port)
        let key = address == target.host ? target : RequestTarget(method: target.method, host: address, port: RequestEndpoint.noPort)
        // Made outside the lock (the sink is user code); a twin made by a racing thread is dropped.
        let made = table.withLock { $0.all[key] } ?? RequestEndpoint(target: key, serverAddress: address, sink: sink)
        return table.withLock { table in
            let endpoint = table.all[key] ?? made
            table.all[key] = endpoint
            table.last = endpoint
            table.lastOrigin = []
            return endpoint
        }
    }
}

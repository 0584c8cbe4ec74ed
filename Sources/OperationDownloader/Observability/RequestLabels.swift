import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Who one request goes to, as OpenTelemetry's HTTP client attributes name it: `http.request.method` (a known
/// method, else `_OTHER`), `server.address` (the URL's host), `server.port` (explicit, else the scheme's).
struct RequestTarget: Sendable {
    let method: String
    let host: String
    let port: Int

    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "QUERY"]

    init(_ request: URLRequest) {
        let method = request.httpMethod?.uppercased() ?? "GET"
        self.method = Self.knownMethods.contains(method) ? method : "_OTHER"
        let url = request.url
        // The raw host: percent-decoding it costs more than the rest of the report.
        host = url?.host(percentEncoded: true)?.lowercased() ?? ""
        port = url?.port ?? (url?.scheme?.lowercased() == "https" ? 443 : 80)
    }
}

/// The labels of `http_client_active_requests`.
struct ActiveSeries: Hashable, Sendable {
    let method: String
    let serverAddress: String
    let port: Int

    var dimensions: [(String, String)] {
        [("http_request_method", method), ("server_address", serverAddress), ("server_port", String(port))]
    }
}

/// The labels of one `http_client_request_duration_seconds` observation. Absent values (no status, no error, a
/// transport that does not tell the protocol version) are left out of the labels.
struct RequestSeries: Hashable, Sendable {
    let method: String
    let serverAddress: String
    let port: Int
    /// 0: no response.
    let status: Int
    /// "": none.
    let errorType: String
    /// "": unknown.
    let protocolVersion: String

    var dimensions: [(String, String)] {
        var dimensions = [("http_request_method", method), ("server_address", serverAddress), ("server_port", String(port))]
        if status > 0 { dimensions.append(("http_response_status_code", String(status))) }
        if !errorType.isEmpty { dimensions.append(("error_type", errorType)) }
        if !protocolVersion.isEmpty { dimensions.append(("network_protocol_version", protocolVersion)) }
        return dimensions
    }
}

import Foundation
import OperationDownloader

/// The transport's measurements of one download, as `--json` prints them under "network" (Docs/Options.md metrics:
/// null where the transport cannot tell, which for URLSession on Linux is all of them). The attempt count is
/// the record's own "attempts".
struct NetworkSummary: Sendable, Equatable {
    var httpVersion: String?
    var remoteAddress: String?
    var connectionReused: Bool?
    var dnsSeconds: Double?
    var connectSeconds: Double?
    var tlsSeconds: Double?

    init(_ metrics: ImageDownloadMetrics) {
        httpVersion = metrics.httpVersion
        remoteAddress = metrics.remoteAddress
        connectionReused = metrics.connectionReused
        dnsSeconds = metrics.domainLookupDuration
        connectSeconds = metrics.connectDuration
        tlsSeconds = metrics.secureConnectionDuration
    }

    var json: JSONValue {
        .object([
            ("http_version", httpVersion.map(JSONValue.string) ?? .null),
            ("remote_address", remoteAddress.map(JSONValue.string) ?? .null),
            ("connection_reused", connectionReused.map(JSONValue.bool) ?? .null),
            ("dns_seconds", dnsSeconds.map(JSONValue.double) ?? .null),
            ("connect_seconds", connectSeconds.map(JSONValue.double) ?? .null),
            ("tls_seconds", tlsSeconds.map(JSONValue.double) ?? .null),
        ])
    }
}

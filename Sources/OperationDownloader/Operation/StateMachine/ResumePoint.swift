import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an attempt cut short leaves for the next one when the rest can be asked for (wget's `-c`, curl's
/// `-C -`): the bytes received, the response they belong to, and the validator that names that version.
///
/// `DownloadStateMachine` makes one when a failed attempt is retried (`init(cutShort:)`) and hands it to the
/// next attempt, which sends `Range: bytes=N-` with `If-Range` (`rangedRequest`). The response to that request
/// is judged by `judge(_:)`: only a `206` that is exactly the rest of the same version continues the bytes kept;
/// a `200` starts over; any other `206` (or a `416`) is discarded and the download starts over without `Range`.
/// Bytes of two versions are never joined.
///
/// A class, immutable once made: the state machine and every attempt hold an optional one, and a reference keeps
/// that optional one word wide on the path of downloads that never resume.
final class ResumePoint {
    /// The bytes received so far: the representation's bytes `0..<from`.
    let buffer: ReceiveBuffer
    /// The body sniffer's state, when it was still undecided (very short bodies).
    let sniffer: BodySniffer?
    /// The size of the last progress report.
    let lastReportedSize: Int
    /// The response the bytes came from (a `200`, the whole representation): what the HTTP cache stores once
    /// the rest has arrived, and what the next response is compared with.
    let original: TransportResponse
    /// The representation's length (the `200`'s `Content-Length`).
    let total: Int
    /// `If-Range`'s value: the strong entity-tag, else the Last-Modified date.
    let ifRange: String
    let entityTag: HTTPEntityTag?
    let lastModified: String?
    /// The request without `Range` and `If-Range`, for starting over.
    let plainRequest: URLRequest

    var from: Int { buffer.count }

    /// The point to resume from after `attempt` was cut short, or nil when the rest cannot be asked for safely:
    /// - some body bytes arrived, fewer than the announced length, from a `200` to a GET without a `Range` of
    ///   the caller's own (a resumed attempt's `206` keeps the `200` it continues);
    /// - the server said it takes byte ranges (`Accept-Ranges: bytes`);
    /// - the body is not content-coded (a range counts encoded bytes, while the buffer holds decoded ones);
    /// - a validator names the version: a strong `ETag`, else a `Last-Modified` at least a second older than the
    ///   response's `Date` (RFC 9110 §13.1.5: only then is the date a strong validator).
    init?(cutShort attempt: Attempt) {
        guard attempt.revalidated == nil, !attempt.awaitingAuthRetry, !attempt.buffer.isEmpty else { return nil }
        let original: TransportResponse
        if let resumed = attempt.resuming, attempt.resumedFrom != nil {
            original = resumed.original
        } else if let response = attempt.serverResponse, response.statusCode == 200 {
            original = response
        } else {
            return nil
        }
        let request = attempt.plainRequest
        guard (request.httpMethod ?? "GET").uppercased() == "GET", request.value(forHTTPHeaderField: "Range") == nil,
              Self.acceptsByteRanges(original), Self.isIdentityCoded(original) else { return nil }
        let total = Int(clamping: original.expectedContentLength)
        guard total > attempt.buffer.count else { return nil }
        let entityTag = original.value(forHTTPHeaderField: "ETag").flatMap { HTTPEntityTag($0) }
        let lastModified = original.value(forHTTPHeaderField: "Last-Modified")
        if let entityTag, !entityTag.isWeak {
            ifRange = entityTag.opaqueTag
        } else if let lastModified, Self.isStrongDate(lastModified, date: original.value(forHTTPHeaderField: "Date")) {
            ifRange = lastModified
        } else {
            return nil
        }
        self.buffer = attempt.buffer
        self.sniffer = attempt.sniffer
        self.lastReportedSize = attempt.lastReportedSize
        self.original = original
        self.total = total
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.plainRequest = request
    }

    /// `request` asking for the rest: `Range: bytes=N-` and `If-Range`, or nil when the request the next attempt
    /// sends is not the one cut (the HTTP cache added its validators, a request modifier changed it): then the
    /// download starts over.
    func rangedRequest(_ request: URLRequest) -> URLRequest? {
        guard request.url == plainRequest.url,
              ["Range", "If-Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"]
                .allSatisfy({ request.value(forHTTPHeaderField: $0) == nil }) else { return nil }
        var ranged = request
        ranged.setValue("bytes=\(from)-", forHTTPHeaderField: "Range")
        ranged.setValue(ifRange, forHTTPHeaderField: "If-Range")
        return ranged
    }

    /// How the response to the ranged request goes on.
    enum Verdict: Equatable {
        /// A `206` with exactly the rest of the same version: the bytes kept are continued.
        case continues
        /// Any other successful response (the server sent the whole, the version changed): start over with it.
        case startsOver
        /// A `206` that is not the rest of this version (another first byte or length, several parts, another
        /// validator), or a `416`: discarded; the download asks again without `Range`.
        case discard
        /// An error status: judged as usual; the bytes kept wait for the next attempt.
        case keeps
    }

    func judge(_ response: TransportResponse) -> Verdict {
        guard let status = response.statusCode else { return .startsOver }
        if status == 416 { return .discard }
        guard (200..<300).contains(status) else { return .keeps }
        guard status == 206 else { return .startsOver }
        guard let range = response.value(forHTTPHeaderField: "Content-Range").flatMap(HTTPContentRange.init),
              range.range.lowerBound == from, range.range.upperBound == total - 1, range.completeLength == total,
              !(response.mimeType ?? "").hasPrefix("multipart/"), Self.isIdentityCoded(response) else { return .discard }
        // The 206 names its version: it must be the one the bytes kept belong to.
        if let kept = entityTag, let sent = response.value(forHTTPHeaderField: "ETag").flatMap({ HTTPEntityTag($0) }),
           !kept.strongMatches(sent) { return .discard }
        if entityTag == nil, let kept = lastModified, let sent = response.value(forHTTPHeaderField: "Last-Modified"),
           HTTPDate.parse(sent) != HTTPDate.parse(kept) { return .discard }
        return .continues
    }

    static func acceptsByteRanges(_ response: TransportResponse) -> Bool {
        guard let value = response.value(forHTTPHeaderField: "Accept-Ranges") else { return false }
        return value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "bytes" }
    }

    static func isIdentityCoded(_ response: TransportResponse) -> Bool {
        guard let value = response.value(forHTTPHeaderField: "Content-Encoding") else { return true }
        return value.split(separator: ",").allSatisfy { $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity" }
    }

    /// RFC 9110 §8.8.2.2: a Last-Modified is strong when it is at least one second before the response's Date.
    static func isStrongDate(_ lastModified: String, date: String?) -> Bool {
        guard let modified = HTTPDate.parse(lastModified), let date = date.flatMap({ HTTPDate.parse($0) }) else { return false }
        return date.timeIntervalSince(modified) >= 1
    }
}

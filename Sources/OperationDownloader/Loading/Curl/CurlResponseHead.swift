import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The head of one HTTP response, assembled from libcurl's header callback (one call per line: the status
/// line, each field, then the empty line). Interim 1xx responses start over; fields after the head
/// (chunked trailers) are not part of it.
struct CurlResponseHead {
    /// "HTTP/1.1", "HTTP/2".
    private(set) var httpVersion: String?
    private(set) var statusCode: Int?
    /// Fields in arrival order; a name repeated (in any case) is joined with ", ", as URLSession does.
    private var fields: [(name: String, value: String)] = []

    /// What one header line meant.
    enum Line {
        /// A status line or field: keep reading.
        case partial
        /// The empty line after an interim (1xx) response: the next status line starts a new head.
        case interim
        /// The empty line ending a final response's head.
        case complete
        /// Not HTTP (no status line before the end of the head).
        case malformed
    }

    /// Adds one line as libcurl delivers it (with its CRLF). Works on the bytes: only the name and value
    /// become strings (this runs for every field of every response).
    mutating func add(_ line: UnsafeRawBufferPointer) -> Line {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            guard let statusCode else { return .malformed }
            if (100..<200).contains(statusCode) {
                self = CurlResponseHead()
                return .interim
            }
            return .complete
        }
        let bytes = UnsafeRawBufferPointer(rebasing: line[..<end])
        if end > 5, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50, bytes[4] == 0x2F {  // "HTTP/"
            // A status line always starts a head (libcurl may deliver several: 1xx, then the final one).
            self = CurlResponseHead()
            parseStatusLine(bytes)
        } else if bytes[0] == 0x20 || bytes[0] == 0x09 {
            // obs-fold: a continuation of the previous field's value.
            if !fields.isEmpty { fields[fields.count - 1].value += " " + Self.trimmed(bytes, 0, end) }
        } else if let colon = bytes.firstIndex(of: 0x3A) {
            let name = Self.trimmed(bytes, 0, colon)
            if !name.isEmpty { fields.append((name, Self.trimmed(bytes, colon + 1, end))) }
        }
        return .partial
    }

    /// bytes[start..<end] without surrounding spaces and tabs, as a string.
    private static func trimmed(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> String {
        var lower = start
        var upper = end
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[lower..<upper]), as: UTF8.self)
    }

    private mutating func parseStatusLine(_ bytes: UnsafeRawBufferPointer) {
        // "HTTP/1.1 200 OK", "HTTP/2 200": the version up to the first space, then three digits.
        guard let space = bytes.firstIndex(of: 0x20) else { return }
        var index = space
        while index < bytes.count, bytes[index] == 0x20 { index += 1 }
        var code = 0
        var digits = 0
        while index < bytes.count, digits < 3, (0x30...0x39).contains(bytes[index]) {
            code = code * 10 + Int(bytes[index] - 0x30)
            digits += 1
            index += 1
        }
        guard digits == 3, index == bytes.count || bytes[index] == 0x20 else { return }
        httpVersion = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<space]), as: UTF8.self)
        statusCode = code
    }

    /// The value of `name` (case-insensitive), repeated fields joined with ", ".
    func value(_ name: String) -> String? {
        var result: String?
        for field in fields where TransportResponse.equalsIgnoringASCIICase(field.name, name) {
            result = result.map { $0 + ", " + field.value } ?? field.value
        }
        return result
    }

    /// The response for `url`, or nil without a status line. No Foundation response is made here: the
    /// operation reads the fields, and `TransportResponse` builds an `HTTPURLResponse` only when one is asked for.
    func response(for url: URL) -> TransportResponse? {
        guard let statusCode else { return nil }
        return TransportResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, fields: fields)
    }

    /// A Basic challenge offered by a 401 (`WWW-Authenticate`) or 407 (`Proxy-Authenticate`): its realm
    /// (nil when the challenge names none), or nil when Basic is not among the offered schemes. Only Basic
    /// is answered by this transport (Docs/Transports.md).
    func basicChallenge(proxy: Bool) -> (realm: String?, found: Bool) {
        guard let header = value(proxy ? "Proxy-Authenticate" : "WWW-Authenticate") else { return (nil, false) }
        return Self.basicRealm(in: header)
    }

    /// Finds a Basic challenge in an authenticate header, which may list several ("Bearer x, Basic realm=y").
    static func basicRealm(in header: String) -> (realm: String?, found: Bool) {
        let scalars = Array(header.unicodeScalars)
        var index = 0
        var inQuotes = false
        var atChallengeStart = true
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\"" { inQuotes.toggle() }
            if !inQuotes, atChallengeStart, scalar != " ", scalar != "," {
                let rest = String(String.UnicodeScalarView(scalars[index...]))
                if rest.lowercased().hasPrefix("basic"), rest.count == 5 || rest.dropFirst(5).first == " " {
                    return (realm(in: String(rest.dropFirst(5))), true)
                }
                atChallengeStart = false
            }
            if !inQuotes, scalar == "," {
                // After a comma comes either a new challenge ("Basic ...") or another parameter ("x=y").
                atChallengeStart = true
            } else if !inQuotes, scalar == "=" {
                atChallengeStart = false
            }
            index += 1
        }
        return (nil, false)
    }

    private static func realm(in parameters: String) -> String? {
        guard let range = parameters.range(of: "realm=", options: .caseInsensitive) else { return nil }
        var value = parameters[range.upperBound...]
        if value.hasPrefix("\"") {
            value = value.dropFirst()
            return String(value.prefix { $0 != "\"" })
        }
        return String(value.prefix { $0 != "," && $0 != " " })
    }
}

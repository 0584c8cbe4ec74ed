import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response as the seam carries it: status, header fields in arrival order, URL, announced length, HTTP
/// version. The operation's own rules (status and content-type validation, metrics, the size limit) read
/// these fields; Foundation's `URLResponse` is made only when something asks for one (a caller, a response
/// modifier, cookies, the HTTP cache, a delegate), once, and then kept.
///
/// Why: corelibs' `HTTPURLResponse` initializer capitalises and compares every header name through
/// locale-aware string functions, a large share of a small download on the curl transport (Docs/Transports.md,
/// "Measured", has the figure). URLSession hands its own response through: nothing is rebuilt there.
final class TransportResponse: @unchecked Sendable {  // immutable; a parsed response's Foundation one is lock-guarded (`Locked`)
    let url: URL
    /// nil for a response that is not HTTP (a `data:` URL's plain `URLResponse`).
    let statusCode: Int?
    /// "HTTP/1.1", "HTTP/2", when the transport knows it.
    let httpVersion: String?
    /// The announced body length (`Content-Length`), or -1.
    let expectedContentLength: Int64
    /// The media type of `Content-Type` (parameters dropped, lower-cased), as `URLResponse.mimeType` says it.
    let mimeType: String?
    /// Fields in arrival order (a repeated name appears once per line); empty when Foundation's response holds them.
    private let fields: [(name: String, value: String)]
    private let source: Source

    /// Where the Foundation response comes from.
    private enum Source {
        /// The response this value came from (URLSession, the HTTP cache, `data:` URLs), whose fields are read.
        case foundation(URLResponse)
        /// Parsed by the package (the curl transport): made from `fields` on first use, then kept.
        case parsed(Locked<URLResponse?>)
    }

    /// A response parsed by the package itself (the curl transport).
    init(url: URL, statusCode: Int, httpVersion: String?, fields: [(name: String, value: String)]) {
        self.url = url
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.fields = fields
        self.source = .parsed(Locked(nil))
        var length: Int64 = -1
        var contentType: String?
        for field in fields {
            if Self.equalsIgnoringASCIICase(field.name, "Content-Length") {
                length = length == -1 ? Int64(field.value) ?? -1 : -1  // repeated: unusable, as Foundation's join
            } else if Self.equalsIgnoringASCIICase(field.name, "Content-Type") {
                contentType = field.value
            }
        }
        self.expectedContentLength = length
        self.mimeType = contentType.map(Self.mediaType(of:))
    }

    /// Foundation's own response, handed through unchanged (URLSession, the HTTP cache, `data:` URLs).
    init(_ response: URLResponse) {
        self.url = response.url ?? URL(fileURLWithPath: "/")
        let http = response as? HTTPURLResponse
        self.statusCode = http?.statusCode
        self.httpVersion = nil
        self.expectedContentLength = response.expectedContentLength
        self.mimeType = response.mimeType
        self.fields = []
        self.source = .foundation(response)
    }

    /// The Foundation response: built on first use (then kept), or the one this value came from.
    var urlResponse: URLResponse {
        switch source {
        case .foundation(let response):
            return response
        case .parsed(let built):
            return built.withLock { built in
                if let built { return built }
                let made: URLResponse = makeHTTPURLResponse() ?? URLResponse(
                    url: url, mimeType: mimeType, expectedContentLength: Int(expectedContentLength), textEncodingName: nil)
                built = made
                return made
            }
        }
    }

    /// The Foundation response as an `HTTPURLResponse`, or nil when it is not HTTP.
    var httpURLResponse: HTTPURLResponse? {
        statusCode == nil ? nil : urlResponse as? HTTPURLResponse
    }

    /// The value of the field `name` (ASCII case-insensitive), repeated fields joined with ", ".
    func value(forHTTPHeaderField name: String) -> String? {
        if case .foundation(let response) = source { return (response as? HTTPURLResponse)?.value(forHTTPHeaderField: name) }
        var result: String?
        for field in fields where Self.equalsIgnoringASCIICase(field.name, name) {
            result = result.map { $0 + ", " + field.value } ?? field.value
        }
        return result
    }

    /// A name repeated with the same spelling is joined with ", " here; HTTPURLResponse itself folds names that
    /// differ only in case (servers spell a name the same way throughout a response; HTTP/2 names are lower-case).
    private func makeHTTPURLResponse() -> HTTPURLResponse? {
        guard let statusCode else { return nil }
        var merged = [String: String](minimumCapacity: fields.count)
        for field in fields {
            // One hash lookup per field in the usual case (no repeated name).
            if let previous = merged.updateValue(field.value, forKey: field.name) {
                merged[field.name] = previous + ", " + field.value
            }
        }
        return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: merged)
    }

    /// "Image/JPEG; charset=x" → "image/jpeg", as corelibs' `mimeType` reads `Content-Type`. On the bytes: this
    /// runs for every response, and a media type is nearly always lower-case ASCII already (no copy then).
    static func mediaType(of contentType: String) -> String {
        let bytes = contentType.utf8
        var start = bytes.startIndex
        var end = bytes.firstIndex(of: 0x3B) ?? bytes.endIndex  // ";"
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end > start {
            let last = bytes[bytes.index(before: end)]
            guard last == 0x20 || last == 0x09 else { break }
            end = bytes.index(before: end)
        }
        let type = bytes[start..<end]
        if start == bytes.startIndex, end == bytes.endIndex, !type.contains(where: { (0x41...0x5A).contains($0) || $0 >= 0x80 }) {
            return contentType
        }
        return String(Substring(type)).lowercased()
    }

    /// Header names are ASCII: compared byte by byte, without Foundation's locale-aware comparison.
    static func equalsIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?):
                if x != y, x | 0x20 != y | 0x20 || !(0x61...0x7A).contains(x | 0x20) { return false }
            default: return false
            }
        }
    }
}

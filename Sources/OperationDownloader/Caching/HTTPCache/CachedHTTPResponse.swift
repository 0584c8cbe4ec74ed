import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response stored by `HTTPImageCache`: the body exactly as it was received (after the transfer's
/// Content-Encoding was undone), the response's status and header fields, and when it was fetched.
public struct CachedHTTPResponse: Sendable {
    /// The stored body (empty for an error status stored without its body; for a 206, the part it holds).
    public private(set) var data: Data
    /// The stored response, rebuilt with its stored status code and header fields (hop-by-hop and
    /// Connection-listed fields removed, a decoded Content-Encoding removed, Content-Length the stored
    /// body's length). When served, it carries a generated `Age` (RFC 9111 §4.2.3).
    public private(set) var response: HTTPURLResponse
    /// When the response was received (or last revalidated with a 304).
    public let storedDate: Date
    /// When the request that produced it was sent; with `storedDate` it gives the response's age (RFC 9111 §4.2.3).
    public let requestDate: Date

    /// The normalised cache key: scheme, host, port, path and query.
    let key: String
    private(set) var headers: HTTPHeaderFields
    let varyValues: [String: String]
    /// The entry file it was read from or written to (the variant's file for a response with `Vary`).
    let fileName: String
    /// False for a response stored without its body (an error status rejected at the header).
    let hasBody: Bool
    /// How the download reports it (`ImageDownloadMetrics.source`).
    var source: ImageDownloadMetrics.Source = .httpCache
    /// Served although stale (stale-while-revalidate, stale-if-error, the request's max-stale).
    var isStale = false

    init?(entry: HTTPCacheEntryFile, url: URL, fileName: String) {
        guard let response = HTTPURLResponse(url: url, statusCode: entry.statusCode, httpVersion: "HTTP/1.1",
                                             headerFields: entry.headers.dictionary) else { return nil }
        self.data = entry.body
        self.response = response
        self.storedDate = entry.responseDate
        self.requestDate = entry.requestDate
        self.key = entry.key
        self.headers = entry.headers
        self.varyValues = entry.varyValues
        self.fileName = fileName
        self.hasBody = entry.kind != .headersOnly
    }

    /// The HTTP status code of the stored response.
    public var statusCode: Int { response.statusCode }

    /// Whether the stored response may be served without contacting the server at `now`.
    public func isFresh(at now: Date = Date()) -> Bool {
        use(for: HTTPHeaderFields(), now: now) == .fresh
    }

    /// The conditional request header fields (If-None-Match, If-Modified-Since) that revalidate this response.
    public var validators: [String: String] { HTTPFreshness.validators(headers) }

    /// What this response may be used for by a request with `request` header fields at `now`.
    func use(for request: HTTPHeaderFields, now: Date) -> HTTPFreshness.Use {
        HTTPFreshness.use(headers, statusCode: statusCode, requestDate: requestDate, responseDate: storedDate,
                          request: request, now: now)
    }

    func mayServeStaleOnError(for request: HTTPHeaderFields, now: Date) -> Bool {
        HTTPFreshness.mayServeStaleOnError(headers, statusCode: statusCode, requestDate: requestDate,
                                           responseDate: storedDate, request: request, now: now)
    }

    /// The same stored response with another status, fields and body: what a cache generates from it (a 206
    /// part, a 304). Its `Age` is set by `served(at:)`.
    func replacing(statusCode: Int, headers fields: HTTPHeaderFields, data body: Data) -> CachedHTTPResponse? {
        guard let url = response.url,
              let rebuilt = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: fields.dictionary)
        else { return nil }
        var copy = self
        copy.response = rebuilt
        copy.headers = fields
        copy.data = body
        return copy
    }

    /// This response as served at `now`: its `Age` field replaced by the current age in whole seconds
    /// (RFC 9111 §4.2.3, §5.1), and marked with how the download reports it.
    func served(at now: Date, source: ImageDownloadMetrics.Source = .httpCache, stale: Bool = false) -> CachedHTTPResponse {
        var copy = self
        copy.source = source
        copy.isStale = stale
        let age = HTTPFreshness.currentAge(headers, requestDate: requestDate, responseDate: storedDate, now: now)
        var fields = headers
        fields.set("Age", String(Int(min(max(0, age), HTTPFieldList.deltaSecondsLimit).rounded(.down))))
        if let url = response.url, let rebuilt = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1",
                                                                  headerFields: fields.dictionary) {
            copy.response = rebuilt
        }
        return copy
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response stored by `HTTPImageCache`: the body exactly as it was received (after the transfer's
/// Content-Encoding was undone), the response's status and header fields, and when it was fetched.
public struct CachedHTTPResponse: Sendable {
    /// The stored body.
    public let data: Data
    /// The stored response, rebuilt with its stored status code and header fields (hop-by-hop fields,
    /// Set-Cookie and Content-Encoding removed; Content-Length is the stored body's length).
    public let response: HTTPURLResponse
    /// When the response was received (or last revalidated with a 304).
    public let storedDate: Date
    /// When the request that produced it was sent; with `storedDate` it gives the response's age (RFC 9111 §4.2.3).
    public let requestDate: Date

    /// The normalised cache key: scheme, host, port, path and query.
    let key: String
    let headers: HTTPHeaderFields
    let varyValues: [String: String]

    init?(entry: HTTPCacheEntryFile, url: URL) {
        guard let response = HTTPURLResponse(url: url, statusCode: entry.statusCode, httpVersion: "HTTP/1.1",
                                             headerFields: entry.headers.dictionary) else { return nil }
        self.data = entry.body
        self.response = response
        self.storedDate = entry.responseDate
        self.requestDate = entry.requestDate
        self.key = entry.key
        self.headers = entry.headers
        self.varyValues = entry.varyValues
    }

    /// The HTTP status code of the stored response.
    public var statusCode: Int { response.statusCode }

    /// Whether the stored response may be served without contacting the server at `now`.
    public func isFresh(at now: Date = Date()) -> Bool {
        HTTPFreshness.isFresh(headers, requestDate: requestDate, responseDate: storedDate, now: now)
    }

    /// The conditional request header fields (If-None-Match, If-Modified-Since) that revalidate this response.
    public var validators: [String: String] { HTTPFreshness.validators(headers) }
}

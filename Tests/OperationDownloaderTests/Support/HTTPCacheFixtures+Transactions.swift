import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

extension HTTPCacheFixtures {
    /// A transaction for a request to `url` with these header fields, as a download with `.useURLCache` makes it.
    static func transaction(_ url: String, _ cache: HTTPImageCache, headers: [String: String] = [:], method: String = "GET",
                            policy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> HTTPCacheTransaction {
        var request = self.request(url, headers: headers)
        request.httpMethod = method
        request.cachePolicy = policy
        return HTTPCacheTransaction(request: request, cache: cache, useURLCache: true, ignoreCachedResponse: false,
                                    handleCookies: false)
    }

    /// A download that reaches the server, which answers `status` with `headers` (Date at `at` added) and
    /// `body`: begin, received, completed, as the operation calls them. Returns the request that was sent.
    @discardableResult
    static func exchange(_ url: String, _ cache: HTTPImageCache, request requestHeaders: [String: String] = [:],
                         method: String = "GET", status: Int = 200, headers: [String: String], body: Data,
                         at: Date = t0) throws -> URLRequest? {
        let tx = transaction(url, cache, headers: requestHeaders, method: method)
        guard case .send(let sent) = tx.begin(now: at, acceptsStatus: { _ in true }) else { return nil }
        let response = try self.response(url, status: status, headers: self.headers(date: at, headers))
        #expect(tx.received(response, now: at) == .proceed)
        tx.completed(response, data: body, now: at)
        return sent
    }
}

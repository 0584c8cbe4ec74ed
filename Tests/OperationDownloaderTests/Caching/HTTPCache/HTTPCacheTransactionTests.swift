import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The operation's view of the HTTP cache: each test plays the server's part with real `HTTPURLResponse`s
/// and counts the requests a download would have sent.
@Suite(.serialized) struct HTTPCacheTransactionTests {
    typealias F = HTTPCacheFixtures
    let cookies = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "OperationDownloaderTests.transaction")

    init() {
        for cookie in cookies.cookies ?? [] { cookies.deleteCookie(cookie) }
    }

    /// A tiny origin: one resource whose body and headers the test sets; it answers conditionals like a server.
    final class Origin {
        var body: Data
        var headers: [String: String]
        var requests: [URLRequest] = []
        init(body: Data, headers: [String: String]) {
            self.body = body
            self.headers = headers
        }

        /// Runs one download through `transaction`: returns the bytes the operation would decode and the
        /// status it saw (nil: served without a request).
        func download(_ transaction: HTTPCacheTransaction, now: Date) throws -> (data: Data?, status: Int?) {
            switch transaction.begin(now: now) {
            case .fail:
                return (nil, nil)
            case .serveFromCache(let stored):
                return (stored.data, nil)
            case .send(let request):
                requests.append(request)
                let url = try #require(request.url).absoluteString
                let etag = headers["ETag"]
                if let inm = request.value(forHTTPHeaderField: "If-None-Match"), inm == etag {
                    let notModified = try F.response(url, status: 304, headers: headers)
                    switch transaction.received(notModified, now: now) {
                    case .serveFromCache(let refreshed): return (refreshed.data, 304)
                    case .notModified, .proceed, .refetch: return (nil, 304)
                    }
                }
                let response = try F.response(url, headers: headers)
                #expect(transaction.received(response, now: now) == .proceed)
                transaction.completed(response, data: body, now: now)
                return (body, 200)
            }
        }
    }

    func transaction(_ url: String, cache: HTTPImageCache?, useURLCache: Bool = true, ignoreCachedResponse: Bool = false,
                     handleCookies: Bool = false, policy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> HTTPCacheTransaction {
        var request = F.request(url)
        request.cachePolicy = policy
        return HTTPCacheTransaction(request: request, cache: cache, useURLCache: useURLCache,
                                    ignoreCachedResponse: ignoreCachedResponse, handleCookies: handleCookies, cookieStorage: cookies)
    }

    @Test func maxAgeSixtyServesTheSecondDownloadWithoutARequest() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/a.png"
        let origin = Origin(body: F.body(1, count: 30_000), headers: F.headers(["Cache-Control": "max-age=60", "ETag": "\"1\""]))
        let first = try origin.download(transaction(url, cache: cache), now: F.t0)
        let second = try origin.download(transaction(url, cache: cache), now: F.t0.addingTimeInterval(30))
        #expect(first.status == 200)
        #expect(second.status == nil)
        #expect(second.data == origin.body)
        #expect(origin.requests.count == 1)
        // A new cache on the same directory (as a new process would) also makes no request.
        let third = try origin.download(transaction(url, cache: HTTPImageCache(directory: dir.url)), now: F.t0.addingTimeInterval(31))
        #expect(third.status == nil && third.data == origin.body)
        #expect(origin.requests.count == 1)
    }

    @Test func noStoreAlwaysGoesToTheNetwork() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let origin = Origin(body: F.body(2, count: 1000), headers: F.headers(["Cache-Control": "no-store", "ETag": "\"2\""]))
        for i in 0..<3 { _ = try origin.download(transaction("http://127.0.0.1:9/s.png", cache: cache), now: F.t0.addingTimeInterval(Double(i))) }
        #expect(origin.requests.count == 3)
        #expect(origin.requests.allSatisfy { $0.value(forHTTPHeaderField: "If-None-Match") == nil })
        #expect(dir.entryFiles.isEmpty)
    }

    @Test func noCacheAndExpiredEntriesAreRevalidatedAnd304ServesTheStoredBytes() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        for (i, cc) in ["no-cache", "max-age=10"].enumerated() {
            let url = "http://127.0.0.1:9/r\(i).png"
            let origin = Origin(body: F.body(3 + i, count: 30_000), headers: F.headers(["Cache-Control": cc, "ETag": "\"r\(i)\""]))
            _ = try origin.download(transaction(url, cache: cache), now: F.t0)
            let again = try origin.download(transaction(url, cache: cache), now: F.t0.addingTimeInterval(20))
            #expect(origin.requests.count == 2)
            #expect(origin.requests.last?.value(forHTTPHeaderField: "If-None-Match") == "\"r\(i)\"")
            #expect(again.status == 304)
            #expect(again.data == origin.body)
        }
    }

    @Test func changedETagReplacesTheStoredBody() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/changing.png"
        let origin = Origin(body: F.body(5, count: 2000), headers: F.headers(["Cache-Control": "no-cache", "ETag": "\"old\""]))
        _ = try origin.download(transaction(url, cache: cache), now: F.t0)
        origin.body = F.body(6, count: 2500)
        origin.headers["ETag"] = "\"new\""
        let changed = try origin.download(transaction(url, cache: cache), now: F.t0.addingTimeInterval(1))
        #expect(changed.status == 200 && changed.data == F.body(6, count: 2500))
        let revalidated = try origin.download(transaction(url, cache: cache), now: F.t0.addingTimeInterval(2))
        #expect(origin.requests.last?.value(forHTTPHeaderField: "If-None-Match") == "\"new\"")
        #expect(revalidated.status == 304 && revalidated.data == F.body(6, count: 2500))
    }

    @Test func queryStringsAreDistinctEntries() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let origin = Origin(body: F.body(7, count: 100), headers: F.headers(["Cache-Control": "max-age=600"]))
        for url in ["http://127.0.0.1:9/q.png?w=1", "http://127.0.0.1:9/q.png?w=2", "http://127.0.0.1:9/q.png?w=1"] {
            _ = try origin.download(transaction(url, cache: cache), now: F.t0)
        }
        #expect(origin.requests.map { $0.url?.query } == ["w=1", "w=2"])
    }

    @Test func withoutUseURLCacheNothingIsReadOrWritten() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/plain.png"
        let origin = Origin(body: F.body(8, count: 100), headers: F.headers(["Cache-Control": "max-age=600", "ETag": "\"p\""]))
        _ = try origin.download(transaction(url, cache: cache, useURLCache: false), now: F.t0)
        #expect(dir.entryFiles.isEmpty)
        _ = try origin.download(transaction(url, cache: cache), now: F.t0)  // stores
        _ = try origin.download(transaction(url, cache: cache, useURLCache: false), now: F.t0)
        #expect(origin.requests.count == 3)
        #expect(origin.requests.last?.value(forHTTPHeaderField: "If-None-Match") == nil)
        // returnCacheDataDontLoad without the option: nothing may be read, so it fails.
        guard case .fail(let error) = transaction(url, cache: cache, useURLCache: false, policy: .returnCacheDataDontLoad).begin()
        else { Issue.record("expected a failure"); return }
        #expect(error.code == .resourceUnavailable)
    }

    @Test func cachePoliciesBehaveAsOnApple() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/policy.png"
        let origin = Origin(body: F.body(9, count: 100), headers: F.headers(["Cache-Control": "max-age=60", "ETag": "\"q\""]))
        guard case .fail = transaction(url, cache: cache, policy: .returnCacheDataDontLoad).begin() else {
            Issue.record("DontLoad with nothing stored must fail"); return
        }
        _ = try origin.download(transaction(url, cache: cache, policy: .returnCacheDataElseLoad), now: F.t0)  // loads, stores
        #expect(origin.requests.count == 1)
        let stale = F.t0.addingTimeInterval(86_400)
        #expect(try origin.download(transaction(url, cache: cache, policy: .returnCacheDataElseLoad), now: stale).status == nil)
        #expect(try origin.download(transaction(url, cache: cache, policy: .returnCacheDataDontLoad), now: stale).status == nil)
        #expect(origin.requests.count == 1)
        _ = try origin.download(transaction(url, cache: cache, policy: .reloadIgnoringLocalCacheData), now: F.t0)
        #expect(origin.requests.count == 2)
        #expect(origin.requests.last?.value(forHTTPHeaderField: "If-None-Match") == nil)
    }

    @Test func ignoreCachedResponseRecognisesTheCachedBytes() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/same.png"
        let origin = Origin(body: F.body(10, count: 500), headers: F.headers(["Cache-Control": "max-age=60"]))
        let first = transaction(url, cache: cache, ignoreCachedResponse: true)
        let firstData = try origin.download(first, now: F.t0).data
        #expect(!first.isCachedBody(try #require(firstData)))  // nothing was cached before

        let fresh = transaction(url, cache: cache, ignoreCachedResponse: true)
        let served = try origin.download(fresh, now: F.t0.addingTimeInterval(1))
        #expect(served.status == nil)
        #expect(fresh.isCachedBody(try #require(served.data)))

        let reload = transaction(url, cache: cache, ignoreCachedResponse: true, policy: .reloadIgnoringLocalCacheData)
        let reloaded = try origin.download(reload, now: F.t0.addingTimeInterval(2))
        #expect(reloaded.status == 200)
        #expect(reload.isCachedBody(try #require(reloaded.data)))
        #expect(!reload.isCachedBody(F.body(11, count: 500)))
        // Without the option the comparison never says "not modified".
        let plain = transaction(url, cache: cache)
        _ = plain.begin()
        #expect(!plain.isCachedBody(origin.body))
    }

    @Test func cookiesOnlyWithHandleCookies() throws {
        defer { for cookie in cookies.cookies ?? [] { cookies.deleteCookie(cookie) } }
        let url = "http://127.0.0.1:9/cookie.png"
        let setting = try F.response(url, headers: ["Set-Cookie": "visitor=42; Path=/"])

        // Without the option: nothing stored...
        let without = transaction(url, cache: nil, handleCookies: false)
        _ = without.begin()
        _ = without.received(setting)
        #expect((cookies.cookies ?? []).isEmpty)
        // ... and nothing sent even when the storage has cookies for the host.
        let with = transaction(url, cache: nil, handleCookies: true)
        _ = with.begin()
        _ = with.received(setting)
        guard case .send(let plain) = transaction(url, cache: nil, handleCookies: false).begin() else {
            Issue.record("expected a request"); return
        }
        #expect(plain.value(forHTTPHeaderField: "Cookie") == nil)
        guard case .send(let next) = transaction("http://127.0.0.1:9/other.png", cache: nil, handleCookies: true).begin() else {
            Issue.record("expected a request"); return
        }
        #expect(next.value(forHTTPHeaderField: "Cookie") == "visitor=42")
    }

    @Test func redirectsRebuildCookiesAndDropValidators() throws {
        defer { for cookie in cookies.cookies ?? [] { cookies.deleteCookie(cookie) } }
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let first = "http://127.0.0.1:9/moved.png"
        let origin = Origin(body: F.body(12, count: 100), headers: F.headers(["Cache-Control": "no-cache", "ETag": "\"m\""]))
        _ = try origin.download(transaction(first, cache: cache), now: F.t0)
        CookieHandling.storeCookies(from: try F.response(first, headers: ["Set-Cookie": "a=1; Path=/"]), for: F.request(first), in: cookies)

        let redirected = transaction(first, cache: cache, handleCookies: true)
        guard case .send(let sent) = redirected.begin(now: F.t0) else { Issue.record("expected a request"); return }
        #expect(sent.value(forHTTPHeaderField: "If-None-Match") == "\"m\"")
        #expect(sent.value(forHTTPHeaderField: "Cookie") == "a=1")
        let hop = try F.response(first, status: 302, headers: ["Location": "http://localhost:9/new.png", "Set-Cookie": "b=2; Path=/"])
        var follow = sent
        follow.url = F.url("http://localhost:9/new.png")
        let next = redirected.redirect(follow, response: hop)
        #expect(next.value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(next.value(forHTTPHeaderField: "Cookie") == nil)  // a=1 and b=2 belong to 127.0.0.1
        #expect(CookieHandling.cookieHeader(for: F.url(first), in: cookies).map { Set($0.components(separatedBy: "; ")) } == ["a=1", "b=2"])
        // The final response is stored under the final URL.
        let final = try F.response("http://localhost:9/new.png", headers: F.headers(["Cache-Control": "max-age=60"]))
        #expect(redirected.received(final) == .proceed)
        redirected.completed(final, data: F.body(13, count: 50))
        #expect(cache.cachedResponse(for: F.request("http://localhost:9/new.png"))?.data == F.body(13, count: 50))
        #expect(cache.cachedResponse(for: F.request(first))?.data == F.body(12, count: 100))
    }

    @Test func unmatched304IsNotModified() throws {
        let transaction = transaction("http://127.0.0.1:9/x.png", cache: nil)
        _ = transaction.begin()
        #expect(transaction.received(try F.response("http://127.0.0.1:9/x.png", status: 304)) == .notModified)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The HTTP cache and cookie layer over real HTTP: `HTTPCacheTransaction` decides, a plain URLSession
/// (`FixtureHTTPClient`, no cache, no cookies of its own) sends, and the fixture server counts the requests
/// and logs their headers. What the download operation adds on top (decoding, callbacks) is not involved.
@Suite(.serialized) struct HTTPCacheFixtureServerTests {
    let server = FixtureServer.shared
    let client = FixtureHTTPClient.shared
    let cookies = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "OperationDownloaderTests.fixture-cookies")

    init() {
        for cookie in cookies.cookies ?? [] { cookies.deleteCookie(cookie) }
    }

    struct Outcome {
        var data: Data?
        /// nil: served from the cache without a request.
        var status: Int?
    }

    /// One download as the operation would run it.
    func download(_ url: URL, cache: HTTPImageCache?, useURLCache: Bool = true, handleCookies: Bool = false) async throws -> Outcome {
        let transaction = HTTPCacheTransaction(request: URLRequest(url: url), cache: cache, useURLCache: useURLCache,
                                               ignoreCachedResponse: false, handleCookies: handleCookies, cookieStorage: cookies)
        switch transaction.begin() {
        case .serveFromCache(let stored):
            return Outcome(data: stored.data, status: nil)
        case .fail(let error):
            throw error
        case .send(let request):
            let result = await client.fetch(try #require(request.url), headers: request.allHTTPHeaderFields ?? [:])
            if let error = result.error { throw error }
            let response = try #require(result.response)
            switch transaction.received(response) {
            case .serveFromCache(let refreshed):
                return Outcome(data: refreshed.data, status: 304)
            case .refetch:
                return Outcome(data: nil, status: 304)
            case .notModified:
                return Outcome(data: nil, status: 304)
            case .proceed:
                if (200..<300).contains(response.statusCode) { transaction.completed(response, data: result.data) }
                return Outcome(data: result.data, status: response.statusCode)
            }
        }
    }

    func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: FixtureServer.fixturesDirectory.appendingPathComponent(name))
    }

    @Test func maxAgeSixtyMakesNoSecondRequest() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = UUID().uuidString
        let url = server.url("/images/baseline.jpg?cc=max-age%3D60&tag=\(tag)")
        let cache = HTTPImageCache(directory: dir.url)
        let first = try await download(url, cache: cache)
        let second = try await download(url, cache: cache)
        // A new cache on the directory: what a new process or another downloader sees.
        let third = try await download(url, cache: HTTPImageCache(directory: dir.url))
        #expect(first.status == 200 && second.status == nil && third.status == nil)
        #expect(second.data == (try fixture("baseline.jpg")) && third.data == second.data)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func noStoreIsNeverStored() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = UUID().uuidString
        let url = server.url("/images/tiny.png?cc=no-store&tag=\(tag)")
        let cache = HTTPImageCache(directory: dir.url)
        _ = try await download(url, cache: cache)
        _ = try await download(url, cache: cache)
        #expect(dir.entryFiles.isEmpty)
        let log = server.requests(tag: tag)
        #expect(log.count == 2)
        #expect(log.allSatisfy { $0.headers["if-none-match"] == nil && $0.headers["if-modified-since"] == nil })
    }

    @Test(arguments: ["cc=no-cache", "expires=-10", "cc=max-age%3D0"])
    func staleEntriesAreRevalidatedAnd304IsServedFromDisk(_ query: String) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = UUID().uuidString
        let url = server.url("/images/progressive.jpg?\(query)&tag=\(tag)")
        let cache = HTTPImageCache(directory: dir.url)
        let first = try await download(url, cache: cache)
        // A new cache (empty memory layer): the 304 is answered from the disk entry.
        let second = try await download(url, cache: HTTPImageCache(directory: dir.url, memoryCapacity: 0))
        #expect(first.status == 200)
        #expect(second.status == 304)
        #expect(second.data == (try fixture("progressive.jpg")))
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)  // the status is logged as the handler ends
        #expect(log.count == 2)
        #expect(log.first?.headers["if-none-match"] == nil)
        let etag = try #require(cache.cachedResponse(for: URLRequest(url: url))?.response.value(forHTTPHeaderField: "ETag"))
        #expect(log.last?.headers["if-none-match"] == etag)
        #expect(log.last?.headers["if-modified-since"] != nil)
        #expect(log.last?.status == 304)
    }

    @Test func changedETagReplacesTheStoredBody() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = UUID().uuidString
        let url = server.url("/images/image.png?cc=no-cache&tag=\(tag)")
        let cache = HTTPImageCache(directory: dir.url)
        // What an earlier version of the resource left in the cache.
        let old = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                               headerFields: ["Cache-Control": "no-cache", "ETag": "\"old-version\""]))
        cache.store(old, data: Data("old bytes".utf8), for: URLRequest(url: url), requestDate: Date(), responseDate: Date())

        let fetched = try await download(url, cache: cache)
        #expect(fetched.status == 200)
        #expect(fetched.data == (try fixture("image.png")))
        #expect(server.requests(tag: tag).first?.headers["if-none-match"] == "\"old-version\"")
        let stored = try #require(HTTPImageCache(directory: dir.url).cachedResponse(for: URLRequest(url: url)))
        #expect(stored.data == (try fixture("image.png")))
        #expect(stored.response.value(forHTTPHeaderField: "ETag") != "\"old-version\"")
    }

    @Test func queryStringsAreDistinctEntries() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = UUID().uuidString
        let cache = HTTPImageCache(directory: dir.url)
        for variant in ["a", "b", "a", "b"] {
            _ = try await download(server.url("/images/tiny.png?cc=max-age%3D60&v=\(variant)&tag=\(tag)"), cache: cache)
        }
        #expect(server.requests(tag: tag).map { $0.query["v"] } == ["a", "b"])
        #expect(dir.entryFiles.count == 2)
    }

    @Test func withoutUseURLCacheEveryDownloadGoesToTheServer() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = UUID().uuidString
        let url = server.url("/images/tiny.png?cc=max-age%3D60&tag=\(tag)")
        let cache = HTTPImageCache(directory: dir.url)
        _ = try await download(url, cache: cache, useURLCache: false)
        _ = try await download(url, cache: cache, useURLCache: false)
        #expect(server.stats(tag: tag).count == 2)
        #expect(dir.entryFiles.isEmpty)
    }

    @Test func gzipBodiesAreStoredDecoded() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = UUID().uuidString
        let url = server.url("/images/image.png?gzip=1&cc=max-age%3D60&tag=\(tag)")
        let cache = HTTPImageCache(directory: dir.url)
        _ = try await download(url, cache: cache)
        let hit = try await download(url, cache: HTTPImageCache(directory: dir.url))
        #expect(hit.status == nil)
        #expect(hit.data == (try fixture("image.png")))
        let stored = try #require(cache.cachedResponse(for: URLRequest(url: url)))
        #expect(stored.response.value(forHTTPHeaderField: "Content-Encoding") == nil)
    }

    @Test func setCookieIsSentOnTheNextRequestOnlyWithHandleCookies() async throws {
        defer { for cookie in cookies.cookies ?? [] { cookies.deleteCookie(cookie) } }
        let tag = UUID().uuidString
        // Without the option: not stored, not sent.
        _ = try await download(server.url("/images/tiny.png?setcookie=plain%3D1&tag=\(tag)"), cache: nil)
        _ = try await download(server.url("/cookies/echo?tag=\(tag)"), cache: nil)
        // With it: stored from the response, sent on the next request to that host, not to another host.
        _ = try await download(server.url("/images/tiny.png?setcookie=handled%3D2&tag=\(tag)"), cache: nil, handleCookies: true)
        let echoed = try await download(server.url("/cookies/echo?tag=\(tag)"), cache: nil, handleCookies: true)
        _ = try await download(server.localhostURL("/cookies/echo?tag=\(tag)"), cache: nil, handleCookies: true)
        _ = try await download(server.url("/cookies/echo?tag=\(tag)"), cache: nil, handleCookies: false)

        let log = server.requests(tag: tag)
        #expect(log.count == 6)
        #expect(log.map { $0.headers["cookie"] } == [nil, nil, nil, "handled=2", nil, nil])
        #expect(String(decoding: echoed.data ?? Data(), as: UTF8.self).contains("handled"))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// `.useURLCache`, `.ignoreCachedResponse` and `.handleCookies` through `ImageDownloader`, against the fixture
/// server (which counts requests and logs their headers). Each test has its own cache directory and no memory
/// image cache, so only the HTTP cache can answer.
@Suite(.serialized) struct HTTPCacheDownloaderTests {
    let server = FixtureServer.shared

    func downloader(_ cache: HTTPImageCache?, _ transport: ImageDownloaderTransport) -> ImageDownloader {
        makeDownloader(transport) {
            $0.imageCache = nil
            $0.httpCache = cache
        }.0
    }

    @Test(arguments: TestTransports.all)
    func freshEntryIsServedWithoutARequestThroughDecodingAndCallbacks(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=max-age%3D600&tag=\(tag)")
        let first = try await downloader(HTTPImageCache(directory: dir.url), transport).image(for: url, options: .useURLCache)
        #expect(first.metrics?.source == .network)

        // Another downloader (and cache instance) on the same directory, as another process would be.
        let (second, queue) = makeDownloader(transport) {
            $0.imageCache = nil
            $0.httpCache = HTTPImageCache(directory: dir.url)
        }
        let recorder = DownloadRecorder()
        second.downloadImage(url, options: .useURLCache, progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        let final = try #require(recorder.final)
        #expect(final.error == nil)
        #expect(final.image?.width == first.image?.width && final.image?.pixels == first.image?.pixels)
        #expect(final.data == first.data)
        #expect(recorder.progressList.last.map { $0.0 == $0.1 && $0.0 == first.data.count } == true)
        #expect(recorder.finals.count == 1)
        #expect(server.stats(tag: tag).count == 1)

        let third = try await second.image(for: url, options: .useURLCache)
        #expect(third.metrics?.source == .httpCache)
        #expect(third.response?.statusCode == 200)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func noCacheIsRevalidatedAnd304IsDecodedFromTheStoredBytes(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=no-cache&tag=\(tag)")
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let first = try await downloader.image(for: url, options: .useURLCache)
        let second = try await downloader.image(for: url, options: .useURLCache)
        #expect(second.metrics?.source == .revalidatedHTTPCache)
        #expect(second.data == first.data)
        #expect(second.image?.pixels == first.image?.pixels)
        #expect(second.response?.statusCode == 200)
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(log.map(\.status) == [200, 304])
        #expect(log.last?.headers["if-none-match"] != nil)
        #expect(log.last?.headers["if-modified-since"] != nil)
    }

    @Test(arguments: TestTransports.all)
    func progressiveLoadDecodesA304FromTheStoredBytes(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=no-cache&tag=\(tag)")
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let first = try await downloader.image(for: url, options: [.useURLCache, .progressiveLoad])
        let second = try await downloader.image(for: url, options: [.useURLCache, .progressiveLoad])
        #expect(second.metrics?.source == .revalidatedHTTPCache)
        #expect(second.image?.pixels == first.image?.pixels)
        #expect(second.image?.isIncomplete == false)
    }

    @Test(arguments: TestTransports.all)
    func noStoreAndMissingOptionAlwaysGoToTheServer(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let noStoreTag = newTag()
        for _ in 0..<2 {
            _ = try await downloader.image(for: server.url("/images/tiny.png?cc=no-store&tag=\(noStoreTag)"), options: .useURLCache)
        }
        let plainTag = newTag()
        for _ in 0..<2 {
            _ = try await downloader.image(for: server.url("/images/tiny.png?cc=max-age%3D60&tag=\(plainTag)"))
        }
        #expect(server.stats(tag: noStoreTag).count == 2)
        #expect(server.stats(tag: plainTag).count == 2)
        #expect(server.requests(tag: plainTag).allSatisfy { $0.headers["if-none-match"] == nil })
        #expect(dir.entryFiles.isEmpty)
    }

    @Test(arguments: TestTransports.all)
    func ignoreCachedResponseReportsCacheNotModified(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        let fresh = server.url("/images/tiny.png?cc=max-age%3D60&tag=\(tag)")
        _ = try await downloader.image(for: fresh, options: [.useURLCache, .ignoreCachedResponse])
        await #expect(throws: ImageDownloaderError.self) {
            _ = try await downloader.image(for: fresh, options: [.useURLCache, .ignoreCachedResponse])
        }
        let recorder = DownloadRecorder()
        downloader.downloadImage(fresh, options: [.useURLCache, .ignoreCachedResponse], completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "cacheNotModified")
        // A 304 to a revalidation is the cached body too.
        let revalidatedTag = newTag()
        let revalidated = server.url("/images/tiny.png?cc=no-cache&tag=\(revalidatedTag)")
        _ = try await downloader.image(for: revalidated, options: .useURLCache)
        let again = DownloadRecorder()
        downloader.downloadImage(revalidated, options: [.useURLCache, .ignoreCachedResponse], completed: again.completed)
        await again.waitForCompletion()
        #expect(again.downloaderError?.caseName == "cacheNotModified")
        // The log's status is written when the server has ended the response: wait for that, not just for the answer.
        #expect(await server.awaitRequests(tag: revalidatedTag, count: 2, finished: true).map(\.status) == [200, 304])
    }

    @Test(arguments: TestTransports.all)
    func returnCacheDataDontLoadWithNothingStoredFailsWithoutARequest(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        var request = URLRequest(url: server.url("/images/tiny.png?tag=\(tag)"))
        request.cachePolicy = .returnCacheDataDontLoad
        let recorder = DownloadRecorder()
        downloader.downloadImage(with: request, options: .useURLCache, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "network\(URLError.Code.resourceUnavailable.rawValue)")
        #expect(server.stats(tag: tag).count == 0)
    }

    @Test(arguments: TestTransports.all)
    func cookiesAreSentAndStoredOnlyWithHandleCookies(_ transport: ImageDownloaderTransport) async throws {
        let downloader = downloader(nil, transport)
        let name = "od\(UUID().uuidString.prefix(8))"
        defer {
            for cookie in HTTPCookieStorage.shared.cookies ?? [] where cookie.name.hasPrefix(name) {
                HTTPCookieStorage.shared.deleteCookie(cookie)
            }
        }
        let tag = newTag()
        // Without the option: the Set-Cookie is not stored.
        _ = try await downloader.image(for: server.url("/images/tiny.png?setcookie=\(name)plain%3D1&tag=\(tag)"))
        #expect(!(HTTPCookieStorage.shared.cookies ?? []).contains { $0.name.hasPrefix(name) })
        // With it: stored, then sent on the next request to the host, but never without the option.
        _ = try await downloader.image(for: server.url("/images/tiny.png?setcookie=\(name)%3D2&tag=\(tag)"), options: .handleCookies)
        _ = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"), options: .handleCookies)
        _ = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"))
        let cookieHeaders = server.requests(tag: tag).map { $0.headers["cookie"] }
        #expect(cookieHeaders.count == 4)
        #expect(cookieHeaders[0] == nil && cookieHeaders[1] == nil && cookieHeaders[3] == nil)
        #expect(cookieHeaders[2]?.contains("\(name)=2") == true)
        #expect(cookieHeaders[2]?.contains("\(name)plain") == false)
    }
}

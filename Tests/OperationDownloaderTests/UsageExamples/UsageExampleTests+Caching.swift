import Decoding
import Foundation
@testable import OperationDownloader
import TestRequirements
import Testing
import UsageExamples

/// The HTTP cache, processing, prefetching, transport and error examples of Docs/Usage.md, run against the
/// fixture server.
extension UsageExampleTests {
    /// `max-age`: a second downloader on the same directory (a second run of a program) is answered from the
    /// HTTP cache without a request.
    @Test func aFreshResponseIsServedFromTheDirectoryWithoutARequest() async throws {
        let directory = TemporaryCacheDirectory()
        defer { directory.remove() }
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [
            CacheScriptStep(headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=600")], file: "image.png"),
        ])
        #expect(try await source(of: url, with: makeCachingDownloader(directory: directory.url)) == .network)
        let second = makeCachingDownloader(directory: directory.url)
        #expect(try await source(of: url, with: second) == .httpCache)
        // The same downloader again: its memory cache of decoded images answers.
        #expect(try await source(of: url, with: second) == .memoryCache)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// Two "machines" (two downloaders, each with its own cache on one redis-server): the second is served
    /// what the first stored, without a request.
    @Test(.requires(.redisServer)) func aFleetSharesOneCacheThroughRedis() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=max-age%3D600&tag=\(tag)")
        #expect(try await source(of: url, with: makeFleetDownloader(redis: redis.url())) == .network)
        #expect(try await source(of: url, with: makeFleetDownloader(redis: redis.url())) == .httpCache)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// No Cache-Control: heuristic freshness (10% of the time since Last-Modified). A file modified just before
    /// it was served is fresh for no time at all, so the second run revalidates (304); with `max-stale` it does not
    /// ask. What Usage.md and HTTPCache.md say about servers without Cache-Control.
    @Test func withoutCacheControlTheSecondRunRevalidatesUnlessMaxStaleAllowsIt() async throws {
        let directory = TemporaryCacheDirectory()
        defer { directory.remove() }
        let tag = newTag()
        let now = HTTPDate.format(Date())
        let url = server.cacheURL(tag: tag, [
            CacheScriptStep(headers: [("Content-Type", "image/png"), ("Date", now), ("Last-Modified", now), ("ETag", "\"v1\"")],
                            file: "image.png"),
            CacheScriptStep(status: 304, headers: [("Date", now), ("ETag", "\"v1\"")]),
        ])
        #expect(try await source(of: url, with: makeCachingDownloader(directory: directory.url)) == .network)
        #expect(try await source(of: url, with: makeCachingDownloader(directory: directory.url)) == .revalidatedHTTPCache)
        #expect(server.stats(tag: tag).count == 2)
        let trusting = makeDownloaderTrustingItsCache(directory: directory.url)
        let result = try await trusting.image(for: url)
        #expect(result.metrics?.source == .httpCache && result.metrics?.servedStale == true)
        #expect(server.stats(tag: tag).count == 2)
    }

    @Test(arguments: TestTransports.all)
    func aThumbnailFitsItsBox(_ transport: ImageDownloaderTransport) async throws {
        let image = try #require(try await thumbnail(of: server.url("/images/baseline.jpg?tag=\(newTag())"),
                                                     with: makeDownloader(transport).0))
        #expect(max(image.width, image.height) == 256)
    }

    @Test func anAvatarIsARoundSquare() async throws {
        let image = try #require(try await avatar(of: server.url("/images/baseline.jpg?tag=\(newTag())"),
                                                  with: makeDownloader().0))
        #expect(image.width == 128 && image.height == 128)
        #expect(image.pixels[3] == 0, "the corner is outside the circle: transparent")
        #expect(image.pixels[(64 * 128 + 64) * 4 + 3] == 255, "the centre is opaque")
    }

    /// Four URLs: two images, one that fails once (the retry policy recovers it), one 404 (skipped).
    @Test func prefetchingRetriesAndCountsWhatItSkipped() async throws {
        let tag = newTag()
        let urls = [
            server.url("/images/tiny.png?tag=\(tag)"), server.url("/images/image.png?tag=\(tag)"),
            server.url("/flaky/\(tag)/baseline.jpg?fail=1&status=503&tag=\(tag)"), server.url("/status/404?tag=\(tag)"),
        ]
        let (downloader, _) = makeDownloader()
        let counts = await prefetch(urls, with: downloader)
        #expect(counts.finished == 4 && counts.skipped == 1)
        #expect(server.requests(tag: tag).filter { $0.path.hasPrefix("/flaky/") }.count == 2)
        // Prefetched: in the memory cache now, answered without a request.
        #expect(try await downloader.image(for: urls[2]).metrics == nil)
    }

    @Test func theTransportIsCurlWhereLibcurlLoads() {
        let configuration = makeDownloader(connectionsPerHost: 4).configuration
        #expect(configuration.transport == .platformDefault)
        #if canImport(FoundationNetworking)
        #expect(configuration.transport == (ImageDownloaderTransport.curl.isAvailable ? .curl : .urlSession))
        #endif
        #expect(configuration.maxConcurrentDownloads == 4)
    }

    @Test func errorsBecomeMessagesForPeople() async throws {
        let downloader = makeDownloader().0
        let tag = newTag()
        func message(_ path: String) async -> String {
            switch await downloader.imageResult(for: server.url(path)) {
            case .success: return "success"
            case .failure(let failure): return userMessage(for: failure.error)
            }
        }
        #expect(await message("/status/404?tag=\(tag)") == "the server answered 404")
        #expect(await message("/html?tag=\(tag)").hasPrefix("the server did not send a usable image"))
        #expect(await message("/images/corrupt.jpg?tag=\(tag)").hasPrefix("the image could not be decoded"))
        #expect(userMessage(for: CancellationError()) == "cancelled")
        #expect(userMessage(for: ImageDownloaderError.network(URLError(.timedOut))) == "the server did not answer in time")
    }
}

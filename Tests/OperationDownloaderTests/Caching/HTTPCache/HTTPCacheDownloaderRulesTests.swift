import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// Issue 13's rules through `ImageDownloader` and the operation, against scripted responses of the fixture
/// server (`/cache`, Tests/Support/fixture_cache.py). Entries are made stale at once with an `Age` larger than
/// their max-age, so no test waits for time to pass.
@Suite(.serialized) struct HTTPCacheDownloaderRulesTests {
    let server = FixtureServer.shared

    func downloader(_ cache: HTTPImageCache, _ transport: ImageDownloaderTransport) -> ImageDownloader {
        makeDownloader(transport) {
            $0.imageCache = nil
            $0.httpCache = cache
        }.0
    }

    /// An image response with these extra header fields.
    func image(_ headers: [(String, String)], file: String = "image.png", hold: String? = nil) -> CacheScriptStep {
        CacheScriptStep(headers: [("Content-Type", "image/png")] + headers, file: file, hold: hold)
    }

    /// Counts background revalidations that ended, for bounded waits without sleeping.
    final class RevalidationEnds: Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        init(_ cache: HTTPImageCache) {
            cache.onRevalidationEnd = { [semaphore] _ in semaphore.signal() }
        }
        func next() async -> Bool {
            await offCooperativePool { [semaphore] in semaphore.wait(timeout: .now() + 60) == .success }
        }
    }

    // MARK: stale-while-revalidate

    @Test(arguments: TestTransports.all)
    func staleWhileRevalidateServesAtOnceAndRevalidatesInTheBackgroundOnce(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let ends = RevalidationEnds(cache)
        let downloader = downloader(cache, transport)
        let tag = newTag()
        let hold = "swr-\(tag)"
        defer { server.release(hold) }
        let url = server.cacheURL(tag: tag, [
            image([("Cache-Control", "max-age=60, stale-while-revalidate=3600"), ("Age", "120"), ("ETag", "\"e1\"")]),
            CacheScriptStep(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"e1\"")], hold: hold),
        ])
        let first = try await downloader.image(for: url, options: .useURLCache)
        #expect(first.metrics?.source == .network)
        for _ in 0..<3 {
            let stale = try await downloader.image(for: url, options: .useURLCache)
            #expect(stale.metrics?.source == .httpCache)
            #expect(stale.metrics?.servedStale == true)
            #expect(stale.data == first.data)
        }
        // One background revalidation, held at the server while the three stale answers went out.
        let log = await server.awaitRequests(tag: tag, count: 2)
        #expect(log.count == 2)
        #expect(log.last?.headers["if-none-match"] == "\"e1\"")
        server.release(hold)
        #expect(await ends.next())
        // The 304 refreshed the entry: fresh now, without a request.
        let refreshed = try await downloader.image(for: url, options: .useURLCache)
        #expect(refreshed.metrics?.source == .httpCache)
        #expect(refreshed.metrics?.servedStale == false)
        #expect(server.stats(tag: tag).count == 2)
    }

    /// An operation the caller runs itself, without a downloader (`ImageDownloaderOperation(request:session:...)`),
    /// serves stale-while-revalidate at once too, revalidating through an operation of its own behind it.
    @Test func aStandaloneOperationServesStaleAndRevalidatesBehindIt() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let ends = RevalidationEnds(cache)
        let tag = newTag()
        let hold = "swr-standalone-\(tag)"
        defer { server.release(hold) }
        let url = server.cacheURL(tag: tag, [
            image([("Cache-Control", "max-age=60, stale-while-revalidate=3600"), ("Age", "120"), ("ETag", "\"s1\"")]),
            CacheScriptStep(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"s1\"")], hold: hold),
        ])
        let queue = OperationQueue()
        func run() async -> (DownloadRecorder, ImageDownloaderOperation) {
            var context = ImageDownloaderContext()
            context.httpCache = cache
            let operation = ImageDownloaderOperation(request: URLRequest(url: url), session: nil, options: [.useURLCache, .avoidDecodeImage],
                                                     context: context)
            let recorder = DownloadRecorder()
            _ = operation.addHandlers(forProgress: nil, completed: recorder.completed)
            queue.addOperation(operation)
            await recorder.waitForCompletion()
            return (recorder, operation)
        }
        let (first, firstOperation) = await run()
        #expect(first.final?.data != nil && firstOperation.metrics?.source == .network)
        // Answered from storage while the revalidation it started is held at the server.
        let (stale, staleOperation) = await run()
        #expect(stale.final?.data == first.final?.data)
        #expect(staleOperation.metrics?.source == .httpCache && staleOperation.metrics?.servedStale == true)
        let log = await server.awaitRequests(tag: tag, count: 2)
        #expect(log.last?.headers["if-none-match"] == "\"s1\"")
        server.release(hold)
        #expect(await ends.next())
        let (fresh, freshOperation) = await run()
        #expect(fresh.final?.data == first.final?.data)
        #expect(freshOperation.metrics?.source == .httpCache && freshOperation.metrics?.servedStale == false)
        #expect(server.stats(tag: tag).count == 2)
    }

    @Test(arguments: TestTransports.all)
    func invalidatingTheDownloaderStopsItsBackgroundRevalidation(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let ends = RevalidationEnds(cache)
        let downloader = downloader(cache, transport)
        let tag = newTag()
        let hold = "swr-invalidate-\(tag)"
        defer { server.release(hold) }
        let url = server.cacheURL(tag: tag, [
            image([("Cache-Control", "max-age=60, stale-while-revalidate=3600"), ("Age", "120"), ("ETag", "\"e1\"")]),
            image([("Cache-Control", "max-age=600"), ("ETag", "\"e2\"")], hold: hold),
        ])
        _ = try await downloader.image(for: url, options: .useURLCache)
        let stale = try await downloader.image(for: url, options: .useURLCache)
        #expect(stale.metrics?.servedStale == true)
        _ = await server.awaitRequests(tag: tag, count: 2)
        downloader.invalidate(cancelPendingOperations: true)
        #expect(await ends.next())
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(log.count == 2)
        #expect(log.last?.aborted == true)  // the background request was cancelled while held
        #expect(cache.revalidationsInFlight == 0)
        // The cancelled revalidation stored nothing: the stale entry is still the first response.
        #expect(cache.cachedResponse(for: URLRequest(url: url))?.response.value(forHTTPHeaderField: "ETag") == "\"e1\"")
    }

    // MARK: stale-if-error and a disconnected origin

    @Test(arguments: TestTransports.all)
    func staleIfErrorServesTheStoredImageWhenTheOriginFails(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [
            image([("Cache-Control", "max-age=60, stale-if-error=3600"), ("Age", "120")]),
            CacheScriptStep(status: 503, body: "down for maintenance"),
            CacheScriptStep(disconnect: true),
        ])
        let first = try await downloader.image(for: url, options: .useURLCache)
        for expectedRequests in [2, 3] {
            let stale = try await downloader.image(for: url, options: .useURLCache)
            #expect(stale.metrics?.source == .httpCache)
            #expect(stale.metrics?.servedStale == true)
            #expect(stale.data == first.data)
            #expect(stale.image?.pixels == first.image?.pixels)
            // libcurl sends a request again once when a reused connection closes without an answer: at least.
            #expect(server.stats(tag: tag).count >= expectedRequests)
        }
    }

    // MARK: Statuses

    @Test(arguments: TestTransports.all)
    func aStoredNotFoundIsAnsweredWithoutARequest(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [CacheScriptStep(status: 404, headers: [("Cache-Control", "max-age=600")], body: "no such image")])
        for _ in 0..<2 {
            let recorder = DownloadRecorder()
            downloader.downloadImage(url, options: .useURLCache, completed: recorder.completed)
            await recorder.waitForCompletion()
            #expect(recorder.downloaderError?.caseName == "status404")
        }
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func onlyIfCachedWithNothingStoredIsA504WithoutARequest(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        var request = URLRequest(url: server.cacheURL(tag: tag, [image([("Cache-Control", "max-age=600")])]))
        request.setValue("only-if-cached", forHTTPHeaderField: "Cache-Control")
        let recorder = DownloadRecorder()
        downloader.downloadImage(with: request, options: .useURLCache, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "status504")
        #expect(server.stats(tag: tag).count == 0)
    }

    // MARK: 304 handling

    @Test(arguments: TestTransports.all)
    func aNotModifiedNamingAnotherRepresentationFetchesAnew(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [
            image([("Cache-Control", "no-cache"), ("ETag", "\"a\"")]),
            CacheScriptStep(status: 304, headers: [("ETag", "\"b\"")]),
            image([("Cache-Control", "max-age=600"), ("ETag", "\"b\"")], file: "tiny.png"),
        ])
        _ = try await downloader.image(for: url, options: .useURLCache)
        let refetched = try await downloader.image(for: url, options: .useURLCache)
        #expect(refetched.metrics?.source == .network)
        #expect(refetched.data == (try FixtureServer.fixtureData("tiny.png")))
        let log = await server.awaitRequests(tag: tag, count: 3, finished: true)
        #expect(log.map(\.status) == [200, 304, 200])
        #expect(log[1].headers["if-none-match"] == "\"a\"")
        #expect(log[2].headers["if-none-match"] == nil)
    }

    // MARK: Served responses

    @Test(arguments: TestTransports.all)
    func servedResponsesCarryAGeneratedAgeAndTheStoredSetCookieIsNeverReplayed(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let name = "odreplay\(UUID().uuidString.prefix(8))"
        defer {
            for cookie in HTTPCookieStorage.shared.cookies ?? [] where cookie.name == name { HTTPCookieStorage.shared.deleteCookie(cookie) }
        }
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [image([("Cache-Control", "max-age=3600"), ("Age", "100"), ("Set-Cookie", "\(name)=1; Path=/")])])
        _ = try await downloader.image(for: url, options: .useURLCache)  // without .handleCookies: nothing stored
        let hit = try await downloader.image(for: url, options: [.useURLCache, .handleCookies])
        #expect(hit.metrics?.source == .httpCache)
        #expect((Int(hit.response?.value(forHTTPHeaderField: "Age") ?? "") ?? 0) >= 100)
        #expect(hit.response?.value(forHTTPHeaderField: "Set-Cookie") == "\(name)=1; Path=/")
        #expect(!(HTTPCookieStorage.shared.cookies ?? []).contains { $0.name == name })
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func varyAcceptKeepsOneVariantPerAcceptValue(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [image([("Cache-Control", "max-age=600"), ("Vary", "Accept")])])
        var webp = ImageDownloaderContext()
        webp.requestModifier = ImageDownloaderRequestModifierBlock(headers: ["Accept": "image/webp,image/*"])
        _ = try await downloader.image(for: url, options: .useURLCache)
        _ = try await downloader.image(for: url, options: .useURLCache, context: webp)
        let plainAgain = try await downloader.image(for: url, options: .useURLCache)
        let webpAgain = try await downloader.image(for: url, options: .useURLCache, context: webp)
        let sources = [plainAgain.metrics?.source, webpAgain.metrics?.source]
        #expect(sources == [.httpCache, .httpCache])
        let log = server.requests(tag: tag)
        #expect(log.count == 2)
        #expect(log.map { $0.headers["accept"] } == [ImageDownloader.shared.value(forHTTPHeaderField: "Accept"), "image/webp,image/*"])
    }
}

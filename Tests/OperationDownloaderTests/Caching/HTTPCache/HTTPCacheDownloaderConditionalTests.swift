import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The caller's own validators through `ImageDownloader` and the operation: a stored response they name is
/// answered `.notModified` without a request, as the origin's 304 is (fixture server, every transport).
@Suite(.serialized) struct HTTPCacheDownloaderConditionalTests {
    let server = FixtureServer.shared

    func downloader(_ cache: HTTPImageCache, _ transport: ImageDownloaderTransport) -> ImageDownloader {
        makeDownloader(transport) {
            $0.imageCache = nil
            $0.httpCache = cache
        }.0
    }

    func download(_ request: URLRequest, _ downloader: ImageDownloader) async -> DownloadRecorder {
        let recorder = DownloadRecorder()
        downloader.downloadImage(with: request, options: .useURLCache, completed: recorder.completed)
        await recorder.waitForCompletion()
        return recorder
    }

    @Test(arguments: TestTransports.all)
    func theCallersOwnValidatorIsAnsweredNotModifiedFromStorage(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [
            CacheScriptStep(headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=600"), ("ETag", "\"e1\"")], file: "image.png"),
        ])
        let first = try await downloader.image(for: url, options: .useURLCache)
        #expect(first.metrics?.source == .network)
        var conditional = URLRequest(url: url)
        conditional.setValue("\"e1\"", forHTTPHeaderField: "If-None-Match")
        let recorder = await download(conditional, downloader)
        #expect(recorder.downloaderError?.caseName == "notModified")
        // Another validator: the stored image, still without a request.
        conditional.setValue("\"e0\"", forHTTPHeaderField: "If-None-Match")
        let other = await download(conditional, downloader)
        #expect(other.downloaderError == nil)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// A stale response the origin may not be asked about (a 503, then a dropped connection, within
    /// stale-if-error): the caller's matching validator still gets `.notModified`, not the stored image.
    @Test(arguments: TestTransports.all)
    func theCallersValidatorIsAnsweredNotModifiedWhenTheOriginFails(_ transport: ImageDownloaderTransport) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let downloader = downloader(HTTPImageCache(directory: dir.url), transport)
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [
            CacheScriptStep(headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=60, stale-if-error=3600"), ("Age", "120"),
                                      ("ETag", "\"e1\"")], file: "image.png"),
            CacheScriptStep(status: 503, body: "down for maintenance"),
            CacheScriptStep(disconnect: true),
        ])
        _ = try await downloader.image(for: url, options: .useURLCache)
        var conditional = URLRequest(url: url)
        conditional.setValue("\"e1\"", forHTTPHeaderField: "If-None-Match")
        for expectedRequests in [2, 3] {
            let recorder = await download(conditional, downloader)
            #expect(recorder.downloaderError?.caseName == "notModified")
            // libcurl sends a request again once when a reused connection closes without an answer: at least.
            #expect(server.stats(tag: tag).count >= expectedRequests)
        }
    }
}

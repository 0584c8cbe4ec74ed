import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Every failure gives its documented typed error, exactly once, and the downloader keeps working.
@Suite struct DownloadErrorTests {
    let server = FixtureServer.shared

    /// Downloads `path`, expects `expected` (an `ImageDownloaderError.caseName`), then checks that a normal
    /// download on the same downloader still succeeds.
    private func expectFailure(
        _ path: String, _ expected: String, options: ImageDownloaderOptions = [],
        context: ImageDownloaderContext? = nil,
        configure: (inout ImageDownloaderConfiguration) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let (downloader, queue) = makeDownloader(configure)
        let tag = newTag()
        let separator = path.contains("?") ? "&" : "?"
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url(path + separator + "tag=\(tag)"), options: options, context: context,
            progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion(sourceLocation: sourceLocation)
        await drain(queue)
        #expect(recorder.finals.count == 1, sourceLocation: sourceLocation)
        #expect(recorder.final?.image == nil, sourceLocation: sourceLocation)
        #expect(recorder.downloaderError?.caseName == expected, "got \(String(describing: recorder.error))",
                sourceLocation: sourceLocation)

        let next = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&next=1"), completed: next.completed)
        await next.waitForCompletion(sourceLocation: sourceLocation)
        #expect(next.final?.image?.width == 1, sourceLocation: sourceLocation)
        #expect(await waitUntil { downloader.currentDownloadCount == 0 }, sourceLocation: sourceLocation)
    }

    @Test func notFound() async { await expectFailure("/status/404", "status404") }
    @Test func serverError() async { await expectFailure("/status/500", "status500") }
    @Test func emptyBody() async { await expectFailure("/empty", "badImageData") }
    @Test func htmlBody() async { await expectFailure("/html", "badImageData") }
    /// The decoder's typed cause is kept (`.decodingFailed`), not flattened into a message.
    @Test func corruptImage() async { await expectFailure("/images/corrupt.jpg", "decodingFailed") }
    /// libcurl reports a non-HTTP reply as "Received HTTP/0.9 when not allowed" (URLError -1002).
    @Test func notAnHTTPResponse() async { await expectFailure("/garbage", "network-1002") }

    @Test func notModified() async {
        // The fixture answers 304 to a matching If-None-Match; the etag override makes the value known.
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        var request = URLRequest(url: server.url("/images/tiny.png?etag=v1&tag=\(tag)"))
        request.setValue("\"v1\"", forHTTPHeaderField: "If-None-Match")
        let recorder = DownloadRecorder()
        downloader.downloadImage(with: request, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "notModified")
        #expect(server.requests(tag: tag).first?.status == 304)
    }

    @Test func zeroPixelImage() async {
        let context = ImageDownloaderContext(codersManager: ImageCodersManager(coders: [ZeroPixelTestCoder()]))
        await expectFailure("/images/tiny.png", "badImageData", context: context)
    }

    @Test func stallBeforeHeadersTimesOut() async {
        await expectFailure("/stall?phase=headers&seconds=20", "network-1001") { $0.downloadTimeout = 2 }
    }

    @Test func stallMidBodyTimesOut() async {
        await expectFailure("/stall?phase=body&seconds=20&file=baseline.jpg", "network-1001") { $0.downloadTimeout = 2 }
    }

    @Test func slowButNeverIdleDownloadHitsTheMaximumDuration() async {
        // 1 KB every 300 ms never trips the idle timeout; `maximumDownloadDuration` ends it.
        await expectFailure("/drip/baseline.jpg?chunk=1024&delay_ms=300", "network-1001") {
            $0.downloadTimeout = 2
            $0.maximumDownloadDuration = 2
        }
    }

    @Test func resetMidBody() async { await expectFailure("/reset/baseline.jpg?after=20000", "network-1005") }
    @Test func closedMidBody() async { await expectFailure("/fin/baseline.jpg?after=20000", "network-1") }

    @Test func announcedSizeOverTheLimit() async {
        await expectFailure("/images/baseline.jpg", "responseTooLarge") { $0.maximumResponseSize = 10_000 }
    }

    @Test func chunkedBodyOverTheLimit() async {
        // No Content-Length: the limit is enforced while receiving, and the transfer is cancelled.
        await expectFailure("/bytes?n=50000000&chunked=1&ct=image/png", "responseTooLarge") {
            $0.maximumResponseSize = 1_000_000
        }
    }

    @Test func unauthorizedWithoutCredential() async {
        await expectFailure("/basic-auth/user/secret/tiny.png", "status401")
    }

    @Test func unauthorizedWithWrongPassword() async {
        await expectFailure("/basic-auth/user/secret/tiny.png", "status401") {
            $0.username = "user"
            $0.password = "wrong"
        }
    }

    @Test func authorizedWithTheRightPassword() async throws {
        let (downloader, _) = makeDownloader {
            $0.username = "user"
            $0.password = "secret"
        }
        let tag = newTag()
        let result = try await downloader.image(for: server.url("/basic-auth/user/secret/tiny.png?tag=\(tag)"))
        #expect(result.image?.width == 1)
        #expect(result.response?.statusCode == 200)
    }

    @Test func authorizedWithURLCredential() async throws {
        let (downloader, _) = makeDownloader {
            $0.urlCredential = URLCredential(user: "u2", password: "p2", persistence: .forSession)
        }
        let result = try await downloader.image(for: server.url("/basic-auth/u2/p2/tiny.png?tag=\(newTag())"))
        #expect(result.image?.width == 1)
    }

    @Test func connectionRefused() async throws {
        let (downloader, _) = makeDownloader()
        let recorder = DownloadRecorder()
        downloader.downloadImage(URL(string: "http://127.0.0.1:1/tiny.png"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "network-1004")
    }
}

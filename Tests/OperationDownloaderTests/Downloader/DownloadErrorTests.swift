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

    /// Downloads `path`, expects `expected` (an `ImageDownloaderError.caseName`, and for `.badImageData` the
    /// reason's case name `reason`), then checks that a normal download on the same downloader still succeeds.
    private func expectFailure(
        _ transport: ImageDownloaderTransport, _ path: String, _ expected: String, reason: String? = nil,
        options: ImageDownloaderOptions = [],
        context: ImageDownloaderContext? = nil,
        configure: (inout ImageDownloaderConfiguration) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let (downloader, queue) = makeDownloader(transport, configure)
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
        if let reason {
            #expect(recorder.badImageDataReason?.caseName == reason, "got \(String(describing: recorder.error))",
                    sourceLocation: sourceLocation)
        }

        let next = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&next=1"), completed: next.completed)
        await next.waitForCompletion(sourceLocation: sourceLocation)
        #expect(next.final?.image?.width == 1, sourceLocation: sourceLocation)
        await awaitIdle(downloader, sourceLocation: sourceLocation)
    }

    @Test(arguments: TestTransports.all)
    func notFound(_ transport: ImageDownloaderTransport) async { await expectFailure(transport, "/status/404", "status404") }
    @Test(arguments: TestTransports.all)
    func serverError(_ transport: ImageDownloaderTransport) async { await expectFailure(transport, "/status/500", "status500") }
    @Test(arguments: TestTransports.all)
    func emptyBody(_ transport: ImageDownloaderTransport) async { await expectFailure(transport, "/empty", "badImageData", reason: "emptyBody") }
    @Test(arguments: TestTransports.all)
    func htmlBody(_ transport: ImageDownloaderTransport) async { await expectFailure(transport, "/html", "badImageData", reason: "notAnImage") }
    /// Bad image data, with the decoder's typed cause kept inside (`.decoding`), not flattened into a message.
    @Test(arguments: TestTransports.all)
    func corruptImage(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/images/corrupt.jpg", "badImageData", reason: "decoding")
    }
    /// libcurl reports a non-HTTP reply as "Received HTTP/0.9 when not allowed": corelibs maps it to
    /// `.unsupportedURL` (-1002), the curl transport to `.badServerResponse` (-1011, as Apple's URLSession).
    @Test(arguments: TestTransports.all)
    func notAnHTTPResponse(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/garbage", TestTransports.notAnHTTPResponse(transport))
    }

    @Test(arguments: TestTransports.all) func notModified(_ transport: ImageDownloaderTransport) async {
        // The fixture answers 304 to a matching If-None-Match; the etag override makes the value known.
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        var request = URLRequest(url: server.url("/images/tiny.png?etag=v1&tag=\(tag)"))
        request.setValue("\"v1\"", forHTTPHeaderField: "If-None-Match")
        let recorder = DownloadRecorder()
        downloader.downloadImage(with: request, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "notModified")
        #expect(await server.awaitRequests(tag: tag, count: 1, finished: true).first?.status == 304)
    }

    @Test(arguments: TestTransports.all) func zeroPixelImage(_ transport: ImageDownloaderTransport) async {
        let context = ImageDownloaderContext(codersManager: ImageCodersManager(coders: [ZeroPixelTestCoder()]))
        await expectFailure(transport, "/images/tiny.png", "badImageData", reason: "zeroPixels", context: context)
    }

    @Test(arguments: TestTransports.all) func stallBeforeHeadersTimesOut(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/stall?phase=headers&seconds=20", "network-1001") { $0.downloadTimeout = 2 }
    }

    @Test(arguments: TestTransports.all) func stallMidBodyTimesOut(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/stall?phase=body&seconds=20&file=baseline.jpg", "network-1001") { $0.downloadTimeout = 2 }
    }

    @Test(arguments: TestTransports.all)
    func slowButNeverIdleDownloadHitsTheMaximumDuration(_ transport: ImageDownloaderTransport) async {
        // 1 KB every 300 ms never trips the idle timeout; `maximumDownloadDuration` ends it.
        await expectFailure(transport, "/drip/baseline.jpg?chunk=1024&delay_ms=300", "network-1001") {
            $0.downloadTimeout = 2
            $0.maximumDownloadDuration = 2
        }
    }

    @Test(arguments: TestTransports.all)
    func resetMidBody(_ transport: ImageDownloaderTransport) async { await expectFailure(transport, "/reset/baseline.jpg?after=20000", "network-1005") }
    /// A FIN before the announced length: `.networkConnectionLost` on every transport (corelibs says -1 with
    /// libcurl's message, which `ConnectionLoss` classifies).
    @Test(arguments: TestTransports.all)
    func closedMidBody(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/fin/baseline.jpg?after=20000", "network-1005")
    }

    @Test(arguments: TestTransports.all) func announcedSizeOverTheLimit(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/images/baseline.jpg", "responseTooLarge") { $0.maximumResponseSize = 10_000 }
    }

    @Test(arguments: TestTransports.all) func chunkedBodyOverTheLimit(_ transport: ImageDownloaderTransport) async {
        // No Content-Length: the limit is enforced while receiving, and the transfer is cancelled.
        await expectFailure(transport, "/bytes?n=50000000&chunked=1&ct=image/png", "responseTooLarge") {
            $0.maximumResponseSize = 1_000_000
        }
    }

    @Test(arguments: TestTransports.all)
    func unauthorizedWithoutCredential(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/basic-auth/user/secret/tiny.png", "status401")
    }

    @Test(arguments: TestTransports.all)
    func unauthorizedWithWrongPassword(_ transport: ImageDownloaderTransport) async {
        await expectFailure(transport, "/basic-auth/user/secret/tiny.png", "status401") {
            $0.username = "user"
            $0.password = "wrong"
        }
    }

    @Test(arguments: TestTransports.all)
    func authorizedWithTheRightPassword(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) {
            $0.username = "user"
            $0.password = "secret"
        }
        let tag = newTag()
        let result = try await downloader.image(for: server.url("/basic-auth/user/secret/tiny.png?tag=\(tag)"))
        #expect(result.image?.width == 1)
        #expect(result.response?.statusCode == 200)
    }

    @Test(arguments: TestTransports.all)
    func authorizedWithURLCredential(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) {
            $0.urlCredential = URLCredential(user: "u2", password: "p2", persistence: .forSession)
        }
        let result = try await downloader.image(for: server.url("/basic-auth/u2/p2/tiny.png?tag=\(newTag())"))
        #expect(result.image?.width == 1)
    }

    @Test(arguments: TestTransports.all) func connectionRefused(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let recorder = DownloadRecorder()
        downloader.downloadImage(URL(string: "http://127.0.0.1:1/tiny.png"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "network-1004")
    }
}

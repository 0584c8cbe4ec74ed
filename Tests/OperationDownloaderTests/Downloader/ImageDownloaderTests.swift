import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Basic downloads against the fixture server: success, headers, invalid URLs, scale, async API.
@Suite struct ImageDownloaderTests {
    let server = FixtureServer.shared

    @Test(arguments: TestTransports.all)
    func downloadsAndDecodesAPNG(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let recorder = DownloadRecorder()
        let token = downloader.downloadImage(
            server.url("/images/image.png?tag=\(tag)"), progress: recorder.progress, completed: recorder.completed)
        #expect(token != nil)
        await recorder.waitForCompletion()
        let final = try #require(recorder.final)
        #expect(final.error == nil)
        let image = try #require(final.image)
        #expect(image.width == 160 && image.height == 120)
        #expect(image.scale == 1)
        #expect(!image.isIncomplete)
        #expect(final.data == (try Data(contentsOf: TestCoders.fixtureFile("image.png"))))
        #expect(recorder.finals.count == 1)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func sendsDefaultAndCustomHeaders(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.setValue("yes", forHTTPHeaderField: "X-Test-Header")
        #expect(downloader.value(forHTTPHeaderField: "x-test-header") == "yes")
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)"), completed: recorder.completed)
        await recorder.waitForCompletion()
        let request = try #require(server.requests(tag: tag).first)
        #expect(request.headers["accept"] == "image/*,*/*;q=0.8")
        #expect(request.headers["user-agent"]?.hasPrefix("OperationDownloader/") == true)
        #expect(request.headers["x-test-header"] == "yes")
        #expect(request.headers["cookie"] == nil)
    }

    /// The downloader's headers are normalised once (as the platform's `setValue` would) and merged into
    /// each request in one step: the request's own fields win whatever their case, nothing is sent twice,
    /// and a value the platform refuses is never stored.
    @Test(arguments: TestTransports.all)
    func requestHeadersWinOverDownloaderHeadersInAnyCase(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.setValue("downloader", forHTTPHeaderField: "x-both")
        downloader.setValue("only-downloader", forHTTPHeaderField: "x-downloader-only")
        downloader.setValue("bad\r\nInjected: yes", forHTTPHeaderField: "X-Bad")
        #expect(downloader.value(forHTTPHeaderField: "X-Bad") == nil)
        #expect(downloader.value(forHTTPHeaderField: "X-DOWNLOADER-ONLY") == "only-downloader")
        let tag = newTag()
        var request = URLRequest(url: server.url("/images/tiny.png?tag=\(tag)"))
        request.setValue("request", forHTTPHeaderField: "X-BOTH")
        request.setValue("text/plain", forHTTPHeaderField: "accept")
        let recorder = DownloadRecorder()
        downloader.downloadImage(with: request, completed: recorder.completed)
        await recorder.waitForCompletion()
        let sent = try #require(server.requests(tag: tag).first)
        #expect(sent.headers["x-both"] == "request")
        #expect(sent.headers["accept"] == "text/plain")
        #expect(sent.headers["x-downloader-only"] == "only-downloader")
        #expect(sent.headers["user-agent"]?.hasPrefix("OperationDownloader/") == true)
        #expect(sent.headers["injected"] == nil && sent.headers["x-bad"] == nil)
        #expect(recorder.final?.image?.width == 1)
    }

    @Test(arguments: TestTransports.all)
    func removedHeaderIsNotSent(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.setValue(nil, forHTTPHeaderField: "Accept")
        downloader.setValue("custom/accept", forHTTPHeaderField: "accept")
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(server.requests(tag: tag).first?.headers["accept"] == "custom/accept")
    }

    @Test func invalidURLCompletesSynchronouslyWithNilToken() {
        let (downloader, _) = makeDownloader()
        let recorder = DownloadRecorder()
        let nilToken = downloader.downloadImage(nil, completed: recorder.completed)
        #expect(nilToken == nil)
        let fileToken = downloader.downloadImage(URL(fileURLWithPath: "/etc/hostname"), completed: recorder.completed)
        #expect(fileToken == nil)
        // Synchronous: both answered before downloadImage returned.
        #expect(recorder.finals.count == 2)
        #expect(recorder.finals.allSatisfy { ($0.error as? ImageDownloaderError)?.caseName == "invalidURL" })
    }

    @Test(arguments: TestTransports.all)
    func scaleFactorComesFromTheURL(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let result = try await downloader.image(for: server.url("/images/image@2x.png?tag=\(tag)"))
        let image = try #require(result.image)
        #expect(image.width == 320 && image.height == 240)
        #expect(image.scale == 2)
        #expect(result.response?.statusCode == 200)
        let metrics = try #require(result.metrics)
        #expect(metrics.statusCode == 200)
        #expect(metrics.receivedBytes == 201659)
        #expect(metrics.startedAt != nil && metrics.responseAt != nil && metrics.firstByteAt != nil)
    }

    @Test(arguments: TestTransports.all)
    func contextScaleFactorAndThumbnail(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let context = ImageDownloaderContext(imageScaleFactor: 3)
        let result = try await downloader.image(for: server.url("/images/image.png?tag=\(tag)"), context: context)
        #expect(result.image?.scale == 3)
    }

    @Test(arguments: TestTransports.all)
    func avoidDecodeImageDeliversDataOnly(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let result = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"), options: .avoidDecodeImage)
        #expect(result.image == nil)
        #expect(result.data.count == 70)
    }

    @Test(arguments: TestTransports.all)
    func acceptableContentTypesAreEnforced(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.acceptableContentTypes = ["image/jpeg"] }
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "invalidDownloadContentType")

        let (wildcard, _) = makeDownloader(transport) { $0.acceptableContentTypes = ["image/*"] }
        let ok = try await wildcard.image(for: server.url("/images/tiny.png?tag=\(tag)"))
        #expect(ok.image?.width == 1)
    }

    @Test(arguments: TestTransports.all)
    func acceptableStatusCodesAreConfigurable(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.acceptableStatusCodes = IndexSet(integer: 201) }
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "status200")
    }
}

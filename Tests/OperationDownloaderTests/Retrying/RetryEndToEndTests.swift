import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OperationDownloader
import Testing

/// Retries against the fixture server's `/flaky` endpoint on every transport (issue 16, Docs/Options.md): the server
/// counts the requests, so attempts are checked where they happen. Small delays keep the waits short.
@Suite struct RetryEndToEndTests {
    let server = FixtureServer.shared
    private static let quick = ImageDownloaderRetryPolicy(maximumAttempts: 3, initialDelay: 0.02, maximumDelay: 0.1)

    private func downloader(_ transport: ImageDownloaderTransport) -> ImageDownloader {
        makeDownloader(transport) {
            $0.retryPolicy = Self.quick
            $0.imageCache = nil
        }.0
    }

    enum Flake: String, CaseIterable, CustomTestStringConvertible {
        case status503 = "mode=status&status=503"
        case status500 = "mode=status&status=500"
        case status429WithRetryAfter = "mode=status&status=429&retry_after=1"
        case reset = "mode=reset"
        case resetMidBody = "mode=reset&after=2000"
        var testDescription: String { String(describing: self) }
    }

    /// Two failures, then the image: three requests at the server, `attemptCount` 3. The 429's Retry-After of
    /// 1 s is capped at the policy's 0.1 s.
    @Test(arguments: TestTransports.all, Flake.allCases)
    func failTwiceThenSucceed(_ transport: ImageDownloaderTransport, _ flake: Flake) async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/image.png?fail=2&\(flake.rawValue)&tag=\(tag)")
        let result = try await downloader(transport).image(for: url)
        #expect(result.image?.width == 160)
        #expect(result.data == (try FixtureServer.fixtureData("image.png")))
        #expect(result.metrics?.attemptCount == 3)
        #expect(server.stats(tag: tag).count == 3)
    }

    @Test(arguments: TestTransports.all)
    func maximumAttemptsReachedFailsWithTheLastStatus(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/image.png?fail=5&status=503&tag=\(tag)")
        let error = await #expect(throws: ImageDownloaderError.self) {
            try await downloader(transport).image(for: url)
        }
        #expect(error?.caseName == "status503")
        #expect(server.stats(tag: tag).count == 3)
    }

    /// A 404 is final: the second request (which would succeed) is never made.
    @Test(arguments: TestTransports.all)
    func a404IsNeverRetried(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/image.png?fail=1&status=404&tag=\(tag)")
        let error = await #expect(throws: ImageDownloaderError.self) {
            try await downloader(transport).image(for: url)
        }
        #expect(error?.caseName == "status404")
        #expect(server.stats(tag: tag).count == 1)
    }

    /// Callers of one URL share the attempts: two requests at the server for three callers, one answer each.
    @Test(arguments: TestTransports.all)
    func coalescedCallersShareTheAttempts(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/image.png?fail=1&tag=\(tag)")
        let (downloader, queue) = makeDownloader(transport) {
            $0.retryPolicy = Self.quick
            $0.imageCache = nil
        }
        let recorders = (0..<3).map { _ in DownloadRecorder() }
        for recorder in recorders { downloader.downloadImage(url, completed: recorder.completed) }
        for recorder in recorders { await recorder.waitForCompletion() }
        await drain(queue)
        #expect(recorders.allSatisfy { $0.final?.image?.width == 160 && $0.finals.count == 1 })
        #expect(server.stats(tag: tag).count == 2)
    }
}

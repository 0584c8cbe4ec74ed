import Decoding
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Synchronization
import Testing

/// The async calls people reach for (issue 26): `image(for:progress:)`, and `imageResult(for:)`, whose failure
/// carries the error, the last response and the metrics (attempts) while `image(for:)` keeps throwing the bare error.
@Suite struct AsyncResultTests {
    let server = FixtureServer.shared
    private static let quick = ImageDownloaderRetryPolicy(maximumAttempts: 3, initialDelay: 0.02, maximumDelay: 0.1)

    @Test(arguments: TestTransports.all)
    func progressReportsEveryChunkEndingWithTheWholeBody(_ transport: ImageDownloaderTransport) async throws {
        let reports = Mutex<[(Int, Int)]>([])
        let url = server.url("/drip/image.png?chunk=8192&delay_ms=5&tag=\(newTag())")
        let result = try await makeDownloader(transport).0.image(for: url) { received, expected in
            reports.withLock { $0.append((received, expected)) }
        }
        let size = try FixtureServer.fixtureData("image.png").count
        let seen = reports.withLock { $0 }
        #expect(result.data.count == size)
        #expect(seen.first.map { $0 == (0, -1) } == true, "the first report says nothing arrived yet")
        #expect(seen.last.map { $0 == (size, size) } == true)
        #expect(seen.count >= 3)
    }

    @Test(arguments: TestTransports.all)
    func aRetriedFailureCarriesItsAttemptsResponseAndMetrics(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/image.png?fail=5&status=503&tag=\(tag)")
        let downloader = makeDownloader(transport) { $0.retryPolicy = Self.quick }.0
        let outcome = await downloader.imageResult(for: url)
        guard case .failure(let failure) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(failure.downloaderError?.caseName == "status503")
        #expect(failure.attemptCount == 3 && failure.metrics?.attemptCount == 3)
        #expect(failure.metrics?.statusCode == 503 && failure.response?.statusCode == 503)
        #expect(failure.metrics?.finishedAt != nil)
        #expect(failure.description == "unacceptable HTTP status 503 (Service Unavailable) (after 3 attempts)")
        #expect(!failure.isCancellation)
        #expect(server.stats(tag: tag).count == 3)
        // The throwing call still throws the bare error: `catch let error as ImageDownloaderError` keeps working.
        let again = newTag()
        let thrown = await #expect(throws: ImageDownloaderError.self) {
            try await downloader.image(for: server.url("/flaky/\(again)/image.png?fail=5&status=503&tag=\(again)"))
        }
        #expect(thrown?.caseName == "status503")
    }

    @Test func aSingleAttemptFailureSaysNoCount() async throws {
        let outcome = await makeDownloader().0.imageResult(for: server.url("/status/404?tag=\(newTag())"))
        guard case .failure(let failure) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(failure.attemptCount == 1)
        #expect(failure.description == "unacceptable HTTP status 404 (Not Found)")
    }

    @Test func aRefusedDownloadHasNoMetricsAndNoAttempts() async throws {
        let outcome = await makeDownloader().0.imageResult(for: try #require(URL(string: "ftp://example.com/a.png")))
        guard case .failure(let failure) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(failure.downloaderError?.caseName == "invalidURL")
        #expect(failure.metrics == nil && failure.response == nil && failure.attemptCount == 0)
    }

    @Test func aSuccessIsTheSameResultImageForReturns() async throws {
        let outcome = await makeDownloader().0.imageResult(for: server.url("/images/tiny.png?tag=\(newTag())"))
        let result = try outcome.get()
        #expect(result.image?.format == .png && result.response?.statusCode == 200 && result.metrics?.attemptCount == 1)
    }

    /// A cancelled Task: `CancellationError` in the failure, as `image(for:)` throws it.
    @Test func aCancelledTaskIsACancellationFailure() async throws {
        let hold = newTag()
        defer { server.release(hold) }
        let downloader = makeDownloader().0
        let url = server.url("/hold/\(hold)/tiny.png?max=120&tag=\(hold)")
        let task = Task { await downloader.imageResult(for: url) }
        task.cancel()
        guard case .failure(let failure) = await task.value else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.error is CancellationError && failure.isCancellation)
    }

    /// The failure's count is the metrics' (requests sent: 0 for a download that never sent one).
    @Test func theFailureDescriptionCountsRequestsSent() {
        var metrics = ImageDownloadMetrics()
        metrics.attemptCount = 0
        #expect(ImageDownloadFailure(error: ImageDownloaderError.cancelled, metrics: metrics).attemptCount == 0)
        #expect(ImageDownloadFailure(error: ImageDownloaderError.cancelled).attemptCount == 0, "no metrics: refused")
        metrics.attemptCount = 4
        let failure = ImageDownloadFailure(error: ImageDownloaderError.network(URLError(.timedOut)), metrics: metrics)
        #expect(failure.attemptCount == 4 && failure.description.hasSuffix("(after 4 attempts)"))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The operation applying `retryPolicy` (issue 16 phase 2, Docs/Options.md) on the scripted transport and a manual
/// clock: the test plays the server and moves time, so every wait is exact. No sleep, no polling.
@Suite struct RetryOperationTests {
    private let png = ScriptedHarness.fixture("image.png")

    /// A harness whose downloads retry: `initialDelay` 0 makes every backoff 0, so a wait lasts exactly what
    /// `Retry-After` asks (capped) and `advance(by: 0)` ends a plain one.
    private func harness(
        attempts: Int = 3, initialDelay: TimeInterval = 0, maximumDelay: TimeInterval = 30,
        _ adjust: @escaping (inout ImageDownloaderConfiguration) -> Void = { _ in }
    ) -> ScriptedHarness {
        ScriptedHarness {
            $0.retryPolicy = ImageDownloaderRetryPolicy(
                maximumAttempts: attempts, initialDelay: initialDelay, maximumDelay: maximumDelay)
            adjust(&$0)
        }
    }

    private func succeed(_ transfer: ScriptedTransfer) {
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        transfer.send(png, inChunks: 3)
        transfer.complete()
    }

    // MARK: - Retried

    @Test func a503IsRetriedAndTheSecondAttemptsImageIsTheOneAnswer() async throws {
        let harness = harness()
        harness.downloader.isSuspended = true
        let (recorder, token) = harness.download()
        let notes = NotificationTally(token)
        harness.downloader.isSuspended = false
        let first = try #require(await harness.transport.transfer(0))
        #expect(first.respond(status: 503, headers: ["Content-Type": "text/plain"]))
        #expect(first.cancelCount == 1, "the 503 is judged at its response")
        #expect(recorder.finals.isEmpty && harness.monitor.pendingCount == 1, "waiting, not answered")
        harness.clock.advance(by: 0)
        succeed(try #require(await harness.transport.transfer(1)))
        await recorder.completion()
        await harness.drained()
        #expect(recorder.final?.image?.width == 160 && recorder.final?.data == png)
        #expect(recorder.finals.count == 1)
        #expect(token?.metrics?.attemptCount == 2)
        #expect(harness.transport.transfers.count == 2)
        // One start/stop pair per attempt, one finish for the download.
        #expect(notes.counts == NotificationTally.Counts(start: 2, stop: 2, finish: 1))
        #expect(notes.names.first == "start" && notes.names.last == "finish")
    }

    @Test func retryAfterIsTheLengthOfTheWait() async throws {
        let harness = harness()
        let (recorder, _) = harness.download()
        let first = try #require(await harness.transport.transfer(0))
        first.respond(status: 429, headers: ["Content-Type": "text/plain", "Retry-After": "7"])
        harness.clock.advance(by: 6.9)
        #expect(harness.monitor.pendingCount == 1, "still waiting")
        #expect(harness.transport.transfers.count == 1)
        harness.clock.advance(by: 0.2)
        succeed(try #require(await harness.transport.transfer(1)))
        await recorder.completion()
        #expect(recorder.final?.image?.width == 160)
    }

    @Test func retryAfterIsCappedAtMaximumDelay() async throws {
        let harness = harness(maximumDelay: 2)
        let (recorder, _) = harness.download()
        let first = try #require(await harness.transport.transfer(0))
        first.respond(status: 503, headers: ["Retry-After": "3600"])
        harness.clock.advance(by: 2)
        succeed(try #require(await harness.transport.transfer(1)))
        await recorder.completion()
        #expect(recorder.final?.image?.width == 160)
    }

    /// Full jitter: the wait is random but never longer than `initialDelay` before the second attempt.
    @Test func theJitteredWaitNeverExceedsItsBound() async throws {
        let harness = harness(initialDelay: 4)
        let (recorder, _) = harness.download()
        try #require(await harness.transport.transfer(0)).complete(error: URLError(.cannotConnectToHost))
        harness.clock.advance(by: 4)
        succeed(try #require(await harness.transport.transfer(1)))
        await recorder.completion()
        #expect(recorder.final?.image?.width == 160)
    }

    /// Without progress handlers (and without progressive decoding) a failure mid-body is retried from zero:
    /// the answer holds the second attempt's bytes only.
    @Test func aMidBodyFailureNobodySawIsRetriedFromZero() async throws {
        let harness = harness()
        let recorder = AsyncRecorder()
        let token = harness.downloader.downloadImage(
            ScriptedHarness.url(), options: [], context: nil, progress: nil, completed: recorder.completed)
        let first = try #require(await harness.transport.transfer(0))
        first.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        first.send(png.prefix(5000))
        first.complete(error: URLError(.networkConnectionLost))
        harness.clock.advance(by: 0)
        succeed(try #require(await harness.transport.transfer(1)))
        await recorder.completion()
        #expect(recorder.final?.data == png)
        #expect(token?.metrics?.attemptCount == 2)
    }

    @Test func maximumAttemptsReachedAnswersTheLastErrorOnce() async throws {
        let harness = harness(attempts: 3)
        harness.downloader.isSuspended = true
        let (recorder, token) = harness.download()
        let notes = NotificationTally(token)
        harness.downloader.isSuspended = false
        for (index, status) in [503, 500, 502].enumerated() {
            try #require(await harness.transport.transfer(index)).respond(status: status)
            harness.clock.advance(by: 0)
        }
        await recorder.completion()
        await harness.drained()
        #expect(recorder.downloaderError?.caseName == "status502")
        #expect(recorder.finals.count == 1)
        #expect(token?.metrics?.attemptCount == 3)
        #expect(harness.transport.transfers.count == 3)
        #expect(harness.monitor.pendingCount == 0)
        #expect(notes.counts == NotificationTally.Counts(start: 3, stop: 3, finish: 0))
    }

    /// Timeouts are per attempt: each transfer has its own idle clock and its own maximumDownloadDuration; an
    /// attempt cancelled by a timeout reports no transport metrics yet counts.
    @Test func timeoutsArePerAttemptAndATimedOutAttemptCounts() async throws {
        let harness = harness(attempts: 2) {
            $0.downloadTimeout = 5
            $0.maximumDownloadDuration = 8
        }
        let (recorder, token) = harness.download()
        let first = try #require(await harness.transport.transfer(0))
        first.respond()
        harness.clock.advance(by: 5.1)  // idle timeout; the 0 s wait ends within the same advance
        #expect(first.cancelCount == 1)
        let second = try #require(await harness.transport.transfer(1))
        second.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        // 4.5 s twice: beyond 8 s since the FIRST attempt began, within 8 s of the second; never idle 5 s.
        second.send(png.prefix(1000))
        harness.clock.advance(by: 4.5)
        second.send(png.dropFirst(1000).prefix(1000))
        harness.clock.advance(by: 2.9)
        #expect(second.cancelCount == 0)
        second.send(png.dropFirst(2000))
        second.complete()
        await recorder.completion()
        #expect(recorder.final?.image?.width == 160, "\(String(describing: recorder.final?.error))")
        #expect(token?.metrics?.attemptCount == 2)
    }

    /// The first caller's context sets the policy (the configuration says never); later callers share it.
    @Test func coalescedCallersShareTheAttemptsAndAJoinerDuringTheWaitJoinsTheNext() async throws {
        let harness = ScriptedHarness()
        let retrying = ImageDownloaderContext(retryPolicy: ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0))
        let (first, _) = harness.download(context: retrying)
        let (second, _) = harness.download(context: ImageDownloaderContext(retryPolicy: .never))
        let transfer = try #require(await harness.transport.transfer(0))
        transfer.respond(status: 503)
        let (joiner, _) = harness.download()
        harness.clock.advance(by: 0)
        succeed(try #require(await harness.transport.transfer(1)))
        for recorder in [first, second, joiner] { await recorder.completion() }
        await harness.drained()
        #expect([first, second, joiner].allSatisfy { $0.finals.count == 1 && $0.final?.image?.width == 160 })
        #expect(harness.transport.transfers.count == 2)
    }

    // MARK: - Not retried

    enum Failure: String, CaseIterable, CustomTestStringConvertible {
        case status404, status400, badImageData, tooLarge, cancelledByTransport
        var testDescription: String { rawValue }
    }

    @Test(arguments: Failure.allCases)
    func aFailureThatIsNeverRetriedEndsTheFirstAttempt(_ failure: Failure) async throws {
        let harness = harness { $0.maximumResponseSize = 4000 }
        let (recorder, token) = harness.download()
        let transfer = try #require(await harness.transport.transfer(0))
        switch failure {
        case .status404: transfer.respond(status: 404)
        case .status400: transfer.respond(status: 400)
        case .badImageData:
            transfer.respond(headers: ["Content-Type": "image/png"])
            transfer.send(Data("<!DOCTYPE html><html><body>not found</body></html>".utf8))
        case .tooLarge:
            transfer.respond(headers: ["Content-Type": "image/png"])
            transfer.send(png.prefix(5000))
        case .cancelledByTransport:
            transfer.complete(error: URLError(.cancelled))
        }
        await recorder.completion()
        harness.clock.advance(by: 60)
        await harness.drained()
        let expected: String = switch failure {
        case .status404: "status404"
        case .status400: "status400"
        case .badImageData: "badImageData"
        case .tooLarge: "responseTooLarge"
        case .cancelledByTransport: "network\(URLError.cancelled.rawValue)"
        }
        #expect(recorder.downloaderError?.caseName == expected)
        #expect(harness.transport.transfers.count == 1)
        #expect(token?.metrics?.attemptCount == 1)
        #expect(recorder.finals.count == 1)
    }

    // A failure after bytes reached a caller (progress, partial images) is retried too: ResumeOperationTests.

    // MARK: - Cancel during the wait

    enum Canceller: String, CaseIterable, CustomTestStringConvertible {
        case token, cancelAllDownloads, invalidate
        var testDescription: String { rawValue }
    }

    @Test(arguments: Canceller.allCases)
    func aCancelDuringTheWaitAnswersCancelledAtOnceAndNothingMoreIsSent(_ canceller: Canceller) async throws {
        let harness = harness(initialDelay: 10)
        harness.downloader.isSuspended = true
        let (recorder, token) = harness.download()
        let notes = NotificationTally(token)
        harness.downloader.isSuspended = false
        try #require(await harness.transport.transfer(0)).respond(status: 503, headers: ["Retry-After": "20"])
        #expect(harness.monitor.pendingCount == 1)
        switch canceller {
        case .token: token?.cancel()
        case .cancelAllDownloads: harness.downloader.cancelAllDownloads()
        case .invalidate: harness.downloader.invalidate(cancelPendingOperations: true)
        }
        // Answered without the clock moving: the wait is gone with its timer.
        #expect(harness.monitor.pendingCount == 0)
        await recorder.completion()
        harness.clock.advance(by: 60)
        await harness.drained()
        #expect(recorder.downloaderError?.caseName == "cancelled")
        #expect(recorder.finals.count == 1)
        #expect(harness.transport.transfers.count == 1)
        #expect(harness.downloader.currentDownloadCount == 0)
        #expect(notes.counts == NotificationTally.Counts(start: 1, stop: 1, finish: 0))
    }

    /// `async` task cancellation during the wait (Docs/Options.md lists it with the token and the downloader's cancels).
    @Test func cancellingTheAsyncTaskDuringTheWaitThrowsCancelled() async throws {
        let harness = harness(initialDelay: 10)
        let downloader = harness.downloader
        let task = Task { try await downloader.image(for: ScriptedHarness.url()) }
        try #require(await harness.transport.transfer(0)).respond(status: 503)
        #expect(harness.monitor.pendingCount == 1)
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(harness.transport.transfers.count == 1)
        #expect(harness.monitor.pendingCount == 0)
    }

    // MARK: - The HTTP cache

    /// Only the successful attempt is stored: a 200 cut short mid-body (retried, since nobody saw its bytes) is not.
    @Test func theHTTPCacheStoresTheSuccessfulAttemptOnly() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("retry-cache-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPImageCache(directory: directory)
        let harness = harness { $0.httpCache = cache }
        let recorder = AsyncRecorder()
        _ = harness.downloader.downloadImage(
            ScriptedHarness.url(), options: [.useURLCache], context: nil, progress: nil, completed: recorder.completed)
        let headers = ["Content-Type": "image/png", "Content-Length": "\(png.count)", "Cache-Control": "max-age=600"]
        let first = try #require(await harness.transport.transfer(0))
        first.respond(headers: headers)
        first.send(png.prefix(4000))
        first.complete(error: URLError(.networkConnectionLost))
        #expect(cache.cachedResponse(for: URLRequest(url: ScriptedHarness.url())) == nil)
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        second.respond(headers: headers)
        second.send(png)
        second.complete()
        await recorder.completion()
        #expect(recorder.final?.image?.width == 160)
        let stored = cache.cachedResponse(for: URLRequest(url: ScriptedHarness.url()))
        #expect(stored?.statusCode == 200 && stored?.data == png)
    }
}

/// Counts the start/stop/finish notifications of one download's operation, in order.
final class NotificationTally: @unchecked Sendable {  // `lock` guards `posted`
    struct Counts: Equatable {
        var start = 0, stop = 0, finish = 0
    }

    private let lock = NSLock()
    private var posted: [String] = []
    private var observers: [any NSObjectProtocol] = []

    init(_ token: ImageDownloadToken?) {
        let operation = token.map { $0.operation as AnyObject }
        for (name, label) in [(Notification.Name.imageDownloadStart, "start"), (.imageDownloadStop, "stop"),
                              (.imageDownloadFinish, "finish")] {
            observers.append(NotificationCenter.default.addObserver(forName: name, object: operation, queue: nil) {
                [weak self] _ in self?.lock.withLock { self?.posted.append(label) }
            })
        }
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }

    var names: [String] { lock.withLock { posted } }

    var counts: Counts {
        let names = self.names
        return Counts(
            start: names.filter { $0 == "start" }.count, stop: names.filter { $0 == "stop" }.count,
            finish: names.filter { $0 == "finish" }.count)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// `whenIdle` and `waitUntilIdle`, on the scripted transport: the waits end when the last operation has
/// left the downloader, cover downloads started meanwhile, and end early when cancelled; `whenIdle` runs its
/// block on the callback queue.
@Suite struct IdleWaitTests {
    private let png = ScriptedHarness.fixture("image.png")

    /// Counts `whenIdle` calls, for assertions.
    private final class Calls: @unchecked Sendable {  // `lock` guards `count`
        private let lock = NSLock()
        private var count = 0
        func record() { lock.withLock { count += 1 } }
        var current: Int { lock.withLock { count } }
    }

    @Test func anIdleDownloaderAnswersAtOnceAndWhenIdleRunsOnTheCallbackQueue() async {
        let harness = ScriptedHarness()
        await harness.downloader.waitUntilIdle()
        let onQueue = Watched<[Bool]>([])
        let key = DispatchSpecificKey<Bool>()
        harness.queue.setSpecific(key: key, value: true)
        harness.downloader.whenIdle { onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == true) } }
        await onQueue.wait(timeout: 30) { !$0.isEmpty }
        #expect(onQueue.current == [true])
    }

    @Test func theWaitEndsWhenTheLastOperationFinishesIncludingOnesStartedMeanwhile() async throws {
        let harness = ScriptedHarness()
        let (first, _) = harness.download(ScriptedHarness.url("a.png"))
        let calls = Calls()
        harness.downloader.whenIdle { calls.record() }
        let waiter = Task { await harness.downloader.waitUntilIdle() }
        let (second, _) = harness.download(ScriptedHarness.url("b.png"))
        let a = try #require(await harness.transport.transfer(for: ScriptedHarness.url("a.png")))
        let b = try #require(await harness.transport.transfer(for: ScriptedHarness.url("b.png")))

        a.respond()
        a.send(png)
        a.complete()
        await first.completion()
        await harness.drained()
        #expect(calls.current == 0, "one download is still in flight")

        b.respond()
        b.send(png)
        b.complete()
        await second.completion()
        await waiter.value
        await harness.drained()  // `whenIdle`'s block was queued before the wait ended
        #expect(calls.current == 1)
        #expect(harness.downloader.currentDownloadCount == 0)
    }

    @Test func cancellingTheWaitingTaskEndsTheWaitAndNothingElse() async throws {
        let harness = ScriptedHarness()
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        let waiter = Task { await harness.downloader.waitUntilIdle() }
        waiter.cancel()
        await waiter.value
        #expect(harness.downloader.currentDownloadCount == 1)
        #expect(transfer.cancelCount == 0)

        transfer.respond()
        transfer.send(png)
        transfer.complete()
        await recorder.completion()
        await harness.downloader.waitUntilIdle()
        #expect(recorder.final?.image != nil)
    }
}

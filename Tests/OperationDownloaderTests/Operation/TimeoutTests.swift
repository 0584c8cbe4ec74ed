import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// Issue 12, point 3 (Docs/Options.md): `downloadTimeout` is an idle timeout, `maximumDownloadDuration` caps a
/// transfer, both stop when the transfer completes (decoding never counts), and 0 means 15 s.
/// The deadline tests run on a manual clock: the test moves time, so nothing depends on the machine's speed.
@Suite struct TimeoutTests {
    let server = FixtureServer.shared

    // MARK: - The monitor's idle registrations

    @Test func anIdleDeadlineMovesWithActivityAndFiresOnceIdle() {
        let (monitor, clock) = makeManualMonitor()
        let activity = Locked<UInt64>(monitor.now())
        let fired = Locked(0)
        _ = monitor.register(idle: 1, owner: ClosureIdleOwner(lastActivity: { activity.current }) {
            fired.withLock { $0 += 1 }
        })
        clock.advance(by: 0.8)
        activity.withLock { $0 = monitor.now() }
        clock.advance(by: 0.5)   // 1.3 s after the start, 0.5 s after the activity
        #expect(fired.current == 0)
        clock.advance(by: 0.6)   // 1.1 s after the activity
        #expect(fired.current == 1)
        clock.advance(by: 10)
        #expect(fired.current == 1)
        #expect(monitor.pendingCount == 0)
    }

    @Test func unregisteringAnIdleDeadlineWhileItIsCheckedWins() {
        let (monitor, clock) = makeManualMonitor()
        let fired = Locked(0)
        let box = Locked<DeadlineMonitor.Registration?>(nil)
        // The owner's `lastActivity` unregisters (as a finishing operation would, on another thread).
        let registration = monitor.register(idle: 1, owner: ClosureIdleOwner(lastActivity: {
            if let registration = box.current { monitor.unregister(registration) }
            return 0
        }) { fired.withLock { $0 += 1 } })
        box.withLock { $0 = registration }
        clock.advance(by: 2)
        #expect(fired.current == 0)
        #expect(monitor.pendingCount == 0)
    }

    // MARK: - Downloads (scripted transport: only the manual clock counts, no transport timer races it)

    @Test func noByteForTheIdleTimeoutFailsWithTimedOut() async throws {
        let harness = ScriptedHarness { $0.downloadTimeout = 5 }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        harness.clock.advance(by: 4.9)
        await harness.drained()
        #expect(recorder.finals.isEmpty)
        harness.clock.advance(by: 0.2)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "network-1001", "got \(String(describing: recorder.final?.error))")
        #expect(transfer.cancelCount == 1)
    }

    @Test func aZeroTimeoutMeansFifteenSeconds() async throws {
        let harness = ScriptedHarness { $0.downloadTimeout = 0 }
        #expect(harness.downloader.configuration.sessionConfiguration.timeoutIntervalForRequest
            == 15 + TransportBackstop.margin)
        let (recorder, _) = harness.download(context: ImageDownloaderContext(downloadTimeout: -3))
        let transfer = try #require(await harness.transport.transfer())
        #expect(transfer.request.idleTimeout == 15)
        harness.clock.advance(by: 14.9)
        await harness.drained()
        #expect(recorder.finals.isEmpty)
        harness.clock.advance(by: 0.2)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "network-1001")
        #expect(DownloadDefaults.idleTimeout(0) == 15 && DownloadDefaults.idleTimeout(.nan) == 15)
        // Whole seconds, always later than the package's own timeout.
        #expect(TransportBackstop.timeout(idle: 0.5) == 301 && TransportBackstop.timeout(idle: 2.5) == 303)
        #expect(TransportBackstop.timeout(idle: 2.5, margin: TransportBackstop.curlMargin) == 8)
    }

    @Test func maximumDownloadDurationFromTheContextCapsTheTransfer() async throws {
        let harness = ScriptedHarness { $0.downloadTimeout = 100 }
        let (recorder, _) = harness.download(context: ImageDownloaderContext(maximumDownloadDuration: 2))
        let transfer = try #require(await harness.transport.transfer())
        #expect(harness.monitor.pendingCount == 2)
        harness.clock.advance(by: 2.1)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "network-1001")
        #expect(transfer.cancelCount == 1)
        #expect(harness.monitor.pendingCount == 0)
    }

    // MARK: - Real transports, the monitor on a manual clock (the test moves time; the server pauses on cue)

    /// A transfer that lasts longer than its idle timeout, never idle that long: the drip pauses twice; at each
    /// pause the test moves the clock 250 s (idle: 300 s), then lets the next part through. So the transport's
    /// events must reach the monitor as activity, whatever the machine's speed. (Idle 300 s: curl's own
    /// low-speed backstop, idle + 5 s of real time, must not fire while a loaded machine reaches the pause.)
    @Test(arguments: TestTransports.all)
    func aSteadyTransferLongerThanTheIdleTimeoutSucceeds(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, clock) = makeManualClockDownloader(transport, idle: 300)
        let tag = newTag()
        let pauses = [("\(tag)-a", 16384), ("\(tag)-b", 32768)]
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/drip/image.png?chunk=4096&delay_ms=0&hold=\(tag)-a,\(tag)-b&hold_at=16384,32768&tag=\(tag)"),
            progress: recorder.progress, completed: recorder.completed)
        for (hold, offset) in pauses {
            await recorder.wait(timeout: 120) { $0.progress.last?.0 == offset }
            clock.advance(by: 250)
            server.release(hold)
        }
        await recorder.waitForCompletion()
        #expect(recorder.final?.image?.width == 160, "got \(String(describing: recorder.error))")
    }

    /// The same pause, but the clock moves past the idle timeout: the download fails as timed out and the
    /// connection is dropped (the server logs the response as aborted).
    @Test(arguments: TestTransports.all)
    func aTransferIdleForTheTimeoutFailsAndDropsTheConnection(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, clock) = makeManualClockDownloader(transport, idle: 30)
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/drip/image.png?chunk=4096&delay_ms=0&hold=\(tag)&hold_at=16384&max=120&tag=\(tag)"),
            progress: recorder.progress, completed: recorder.completed)
        await recorder.wait(timeout: 120) { $0.progress.last?.0 == 16384 }
        clock.advance(by: 31)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "network-1001", "got \(String(describing: recorder.error))")
        let log = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(log.first?.aborted == true)
    }

    /// A downloader on `transport` whose timeouts run on a manual clock. The transport's own backstop runs on the
    /// real clock, at least idle + 5 s (35 s) away: far beyond the slowest pause a loaded machine under TSan has shown.
    private func makeManualClockDownloader(
        _ transport: ImageDownloaderTransport, idle: TimeInterval
    ) -> (ImageDownloader, ManualClock) {
        let (monitor, clock) = makeManualMonitor()
        let (downloader, _) = makeDownloader(transport, monitor: monitor) { $0.downloadTimeout = idle }
        return (downloader, clock)
    }
}

/// Wraps a coder; a one-shot decode tells `started()` waiters, then waits (bounded) for `proceed`.
final class BlockingCoder: ImageCoder, @unchecked Sendable {  // `lock` guards the start state; `base` is immutable
    let proceed = DispatchSemaphore(value: 0)
    private let base: any ImageCoder
    private let lock = NSLock()
    private var hasStarted = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Returns once a decode has started.
    func started() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = lock.withLock {
                if hasStarted { return true }
                waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    init(base: any ImageCoder) {
        self.base = base
    }

    static func wrapping(fixture: String) -> BlockingCoder? {
        TestCoders.sharedCoder(decoding: fixture).map(BlockingCoder.init(base:))
    }

    func canDecode(_ data: Data) -> Bool { base.canDecode(data) }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            hasStarted = true
            defer { waiters = [] }
            return waiters
        }
        waiting.forEach { $0.resume() }
        // A bound against hangs only, well past the minute a busy cooperative pool can delay the test's signal.
        _ = proceed.wait(timeout: .now() + 300)
        return try base.decode(data, options: options)
    }
}

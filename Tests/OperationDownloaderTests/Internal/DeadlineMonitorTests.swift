import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The shared total-timeout monitor: every registration fires once, never before its deadline, never after
/// it was unregistered, and an earlier deadline re-arms the single timer.
@Suite struct DeadlineMonitorTests {
    /// Fire times per key, in seconds since the probe was made.
    final class Probe: Sendable {
        private let start = DispatchTime.now().uptimeNanoseconds
        private let fires = Watched<[Int: [Double]]>([:])

        func record(_ key: Int) {
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            fires.withLock { $0[key, default: []].append(elapsed) }
        }

        var snapshot: [Int: [Double]] { fires.current }

        /// Waits (no polling) until `condition` holds for the fires so far.
        @discardableResult
        func wait(timeout: TimeInterval = 120, until condition: @escaping ([Int: [Double]]) -> Bool) async -> Bool {
            await fires.wait(timeout: timeout, until: condition)
        }
    }

    @Test func manyDeadlinesEachFireOnceAndUnregisteredNeverFire() async {
        let monitor = DeadlineMonitor()
        let probe = Probe()
        // Registered latest first, so most registrations are not the earliest and some are.
        let seconds = (1...20).map { Double(21 - $0) * 0.1 }
        var registrations: [DeadlineMonitor.Registration] = []
        for (key, delay) in seconds.enumerated() {
            registrations.append(monitor.register(after: delay) { probe.record(key) })
        }
        let removed = Set(stride(from: 0, to: seconds.count, by: 3))
        for key in removed { monitor.unregister(registrations[key]) }
        let expected = Set(seconds.indices).subtracting(removed)

        await probe.wait { Set($0.keys) == expected }
        // Nothing more can arrive: no deadline is left (an unregistered one still there would be counted),
        // and each fired entry was removed before its handler ran.
        #expect(monitor.pendingCount == 0)
        let fires = probe.snapshot
        #expect(Set(fires.keys) == expected)
        for key in expected {
            #expect(fires[key]?.count == 1, "key \(key) fired \(fires[key]?.count ?? 0) times")
            // Dispatch timers never fire early: a lower bound only (the machine is shared).
            if let at = fires[key]?.first { #expect(at >= seconds[key], "key \(key) fired at \(at) s") }
        }
        #expect(monitor.pendingCount == 0)
        // Unregistering again (as a finish racing the timeout does) is harmless.
        for registration in registrations { monitor.unregister(registration) }
    }

    @Test func anEarlierDeadlineRearmsTheTimer() async {
        let monitor = DeadlineMonitor()
        let probe = Probe()
        let late = monitor.register(after: 300) { probe.record(0) }
        _ = monitor.register(after: 0.2) { probe.record(1) }
        await probe.wait(timeout: 30) { $0[1] != nil }
        #expect(probe.snapshot[0] == nil)
        #expect(monitor.pendingCount == 1)
        monitor.unregister(late)
        #expect(monitor.pendingCount == 0)
    }

    @Test func handlersRunOutsideTheLock() async {
        // A handler that registers again (as a timed-out operation unregisters itself) must not deadlock.
        let monitor = DeadlineMonitor()
        let probe = Probe()
        _ = monitor.register(after: 0.05) {
            probe.record(0)
            _ = monitor.register(after: 0.05) { probe.record(1) }
        }
        await probe.wait { $0[1] != nil }
        #expect(probe.snapshot[0]?.count == 1)
    }

    @Test func downloadsWithDifferentTimeoutsEachTimeOutOnce() async {
        let server = FixtureServer.shared
        let (downloader, queue) = makeDownloader { $0.maxConcurrentDownloads = 16 }
        let tag = newTag()
        let ended = Probe()
        var stalled: [(timeout: Double, recorder: DownloadRecorder)] = []
        for (index, timeout) in [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.5, 2.5].enumerated() {
            let recorder = DownloadRecorder()
            let record = recorder.completed
            downloader.downloadImage(
                server.url("/stall?phase=headers&seconds=60&tag=\(tag)&n=\(index)"),
                context: ImageDownloaderContext(downloadTimeout: timeout),
                completed: { image, data, error, finished in
                    if finished { ended.record(index) }
                    record(image, data, error, finished)
                })
            stalled.append((timeout, recorder))
        }
        // Quick downloads beside the stalled ones, sharing the one timer: they succeed, whatever the stalled
        // ones' deadlines do. (Their own timeout is generous: under TSan a 1 s budget for a loopback download
        // beside 8 stalled ones was seen to run out. That unregistered deadlines never fire is tested above.)
        var quick: [DownloadRecorder] = []
        for index in 0..<4 {
            let recorder = DownloadRecorder()
            downloader.downloadImage(
                server.url("/images/tiny.png?tag=\(tag)&quick=\(index)"),
                context: ImageDownloaderContext(downloadTimeout: 30), completed: recorder.completed)
            quick.append(recorder)
        }
        for (index, (timeout, recorder)) in stalled.enumerated() {
            await recorder.waitForCompletion()
            #expect(recorder.downloaderError?.caseName == "network-1001", "got \(String(describing: recorder.error))")
            // Not before its own timeout, and before the server's 60 s stall would have ended it (a loaded test
            // process has taken 20 s to come round to a callback).
            let elapsed = ended.snapshot[index]?.first ?? 0
            #expect(elapsed >= timeout && elapsed < 55, "timeout \(timeout) s ended after \(elapsed) s")
        }
        await drain(queue)
        for (_, recorder) in stalled { #expect(recorder.finals.count == 1) }
        for recorder in quick {
            #expect(recorder.finals.count == 1)
            #expect(recorder.final?.image?.width == 1)
        }
        await awaitIdle(downloader)
    }
}

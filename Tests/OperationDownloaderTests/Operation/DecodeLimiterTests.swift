import Foundation
import Testing
@testable import OperationDownloader

@Suite struct DecodeLimiterTests {
    /// Records how many works overlap and in which order they start.
    final class Probe: @unchecked Sendable {  // `lock` guards every var
        private let lock = NSLock()
        private var current = 0
        private var peak = 0
        private var order: [Int] = []
        private var finished = 0

        func begin(_ index: Int) {
            lock.withLock {
                current += 1
                peak = max(peak, current)
                order.append(index)
            }
        }

        func end() {
            lock.withLock {
                current -= 1
                finished += 1
            }
        }

        var snapshot: (current: Int, peak: Int, order: [Int], finished: Int) {
            lock.withLock { (current, peak, order, finished) }
        }
    }

    /// Waits (off the cooperative pool) for `semaphore`; a generous bound against hangs only.
    private func wait(_ semaphore: DispatchSemaphore) async -> Bool {
        await Task.detached { semaphore.wait(timeout: .now() + 30) == .success }.value
    }

    /// Every work holds its slot until the test releases it, so what runs at once is decided by the limiter
    /// alone: exactly two start, no third until one ends, then one more per release, in the order asked.
    @Test func runsExactlyItsLimitAtOnceAndTheRestInOrder() async {
        let limiter = DecodeLimiter(limit: 2)
        let probe = Probe()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        // Each work on its own serial queue, as each operation has its own coder queue.
        for index in 0..<12 {
            limiter.async(on: DispatchQueue(label: "DecodeLimiterTests.\(index)")) {
                probe.begin(index)
                started.signal()
                release.wait()
                probe.end()
                ended.signal()
            }
        }
        #expect(await wait(started))
        #expect(await wait(started))
        // Nothing has ended, so the limiter cannot have started a third.
        let full = probe.snapshot
        #expect(full.current == 2 && full.order.count == 2 && Set(full.order) == [0, 1], "\(full)")
        for next in 2..<12 {
            release.signal()
            #expect(await wait(started), "work \(next) did not start after a slot freed")
            let step = probe.snapshot
            #expect(step.current == 2 && step.order.last == next, "\(step)")
        }
        for _ in 0..<2 { release.signal() }
        for _ in 0..<12 { #expect(await wait(ended)) }
        let result = probe.snapshot
        #expect(result.peak == 2 && result.current == 0 && result.finished == 12)
        #expect(result.order.dropFirst(2).elementsEqual(2..<12))
    }

    @Test func aLimitBelowOneStillRuns() async {
        let limiter = DecodeLimiter(limit: 0)
        let done = DispatchSemaphore(value: 0)
        limiter.async(on: DispatchQueue(label: "DecodeLimiterTests.zero")) { done.signal() }
        let signalled = await Task.detached { done.wait(timeout: .now() + 30) == .success }.value
        #expect(signalled)
    }
}

import Foundation
import Testing
@testable import OperationDownloader

@Suite struct DecodeLimiterTests {
    /// Records how many works overlap and in which order they start.
    final class Probe: @unchecked Sendable {  // `lock` guards every var
        private let lock = NSLock()
        private var current = 0
        private(set) var peak = 0
        private(set) var order: [Int] = []
        private(set) var finished = 0

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

        var snapshot: (peak: Int, order: [Int], finished: Int) { lock.withLock { (peak, order, finished) } }
    }

    @Test func neverRunsMoreThanItsLimit() async {
        let limiter = DecodeLimiter(limit: 2)
        let probe = Probe()
        let gate = DispatchSemaphore(value: 0)
        // Each work on its own serial queue, as each operation has its own coder queue.
        for index in 0..<12 {
            let queue = DispatchQueue(label: "DecodeLimiterTests.\(index)")
            limiter.async(on: queue) {
                probe.begin(index)
                usleep(2_000)  // overlap with whatever else is allowed to run
                probe.end()
                gate.signal()
            }
        }
        for _ in 0..<12 {
            let signalled = await Task.detached { gate.wait(timeout: .now() + 30) == .success }.value
            #expect(signalled)
        }
        let result = probe.snapshot
        #expect(result.finished == 12)
        #expect(result.peak <= 2)
        #expect(Set(result.order) == Set(0..<12))
    }

    @Test func aLimitBelowOneStillRuns() async {
        let limiter = DecodeLimiter(limit: 0)
        let done = DispatchSemaphore(value: 0)
        limiter.async(on: DispatchQueue(label: "DecodeLimiterTests.zero")) { done.signal() }
        let signalled = await Task.detached { done.wait(timeout: .now() + 30) == .success }.value
        #expect(signalled)
    }
}

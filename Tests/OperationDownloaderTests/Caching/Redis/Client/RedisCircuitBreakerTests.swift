import Foundation
import Testing
@testable import OperationDownloader

/// The breaker's state machine on a manual clock (nanoseconds).
@Suite struct RedisCircuitBreakerTests {
    static let second: UInt64 = 1_000_000_000

    /// A breaker and the two calls on it, as plain functions (`#expect` cannot call mutating members).
    final class Harness {
        var breaker: RedisCircuitBreaker
        init(initial: TimeInterval, maximum: TimeInterval) { breaker = RedisCircuitBreaker(initialInterval: initial, maximumInterval: maximum) }
        func admit(_ seconds: Double) -> Bool { breaker.admit(now: UInt64(seconds * Double(RedisCircuitBreakerTests.second))) }
        func fail(_ seconds: Double) -> RedisCircuitBreaker.Transition { breaker.failed(now: UInt64(seconds * Double(RedisCircuitBreakerTests.second))) }
    }

    @Test func opensOnFailureAndAdmitsOneProbeAfterTheInterval() {
        let h = Harness(initial: 1, maximum: 4)
        #expect(h.admit(0))
        #expect(h.fail(0) == .opened(retryIn: 1))
        // Refused at once during the back-off.
        #expect(!h.admit(0.5))
        // One probe after it; the others are refused while it runs.
        #expect(h.admit(1))
        #expect(!h.admit(1))
        h.breaker.succeeded()
        #expect(h.breaker.isClosed)
        #expect(h.admit(1))
    }

    @Test func failedProbesDoubleTheIntervalUpToTheMaximum() {
        let h = Harness(initial: 1, maximum: 4)
        #expect(h.fail(0) == .opened(retryIn: 1))
        #expect(h.admit(1))
        #expect(h.fail(1) == .stillOpen(retryIn: 2))
        #expect(!h.admit(2))
        #expect(h.admit(3))
        #expect(h.fail(3) == .stillOpen(retryIn: 4))
        #expect(h.admit(7))
        #expect(h.fail(7) == .stillOpen(retryIn: 4))
        // Another call failing while open changes nothing (and warns nothing).
        #expect(h.fail(8) == .none)
    }

    /// Each outage is announced once: the transition into `open` from `closed`.
    @Test func everyOutageOpensOnce() {
        let h = Harness(initial: 1, maximum: 30)
        var openings = 0
        for round in 0..<3 {
            let start = Double(round) * 100
            if case .opened = h.fail(start) { openings += 1 }
            _ = h.fail(start)
            #expect(h.admit(start + 2))
            h.breaker.succeeded()
        }
        #expect(openings == 3)
    }
}

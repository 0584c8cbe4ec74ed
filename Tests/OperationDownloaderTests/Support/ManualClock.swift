import Foundation
@testable import OperationDownloader

/// A `DeadlineClock` that moves only when the test says: `advance(by:)` runs the monitor's expired deadlines
/// on the calling thread, before it returns. Timeouts become deterministic: no sleep, no race with a timer.
final class ManualClock: DeadlineClock, @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private var nanoseconds: UInt64 = 1_000_000_000
    private var armedAt = UInt64.max
    private var handler: (@Sendable () -> Void)?

    func now() -> UInt64 { lock.withLock { nanoseconds } }

    func schedule(at deadline: UInt64) {
        lock.withLock { armedAt = deadline }
    }

    func setHandler(_ handler: @escaping @Sendable () -> Void) {
        lock.withLock { self.handler = handler }
    }

    /// The deadline the monitor asked for (`UInt64.max`: none).
    var scheduledDeadline: UInt64 { lock.withLock { armedAt } }

    /// Moves time forward; fires the monitor (synchronously) whenever its deadline is passed on the way.
    func advance(by seconds: TimeInterval) {
        let target = lock.withLock { nanoseconds } + UInt64(seconds * 1e9)
        // Bounded: each round either fires (the monitor re-arms later or never) or reaches the target.
        for _ in 0..<10_000 {
            let step: (@Sendable () -> Void)? = lock.withLock {
                if armedAt <= target {
                    nanoseconds = max(nanoseconds, min(armedAt, target))
                    armedAt = UInt64.max
                    return handler
                }
                nanoseconds = target
                return nil
            }
            guard let step else { return }
            step()
        }
    }
}

/// A monitor on a fresh manual clock.
func makeManualMonitor() -> (DeadlineMonitor, ManualClock) {
    let clock = ManualClock()
    return (DeadlineMonitor(clock: clock), clock)
}

/// An idle-deadline owner made of two closures, for the monitor's own tests.
final class ClosureIdleOwner: IdleDeadlineOwner {
    private let activity: @Sendable () -> UInt64
    private let handler: @Sendable () -> Void

    init(lastActivity: @escaping @Sendable () -> UInt64, handler: @escaping @Sendable () -> Void) {
        self.activity = lastActivity
        self.handler = handler
    }

    func lastActivity() -> UInt64 { activity() }
    func idleDeadlinePassed() { handler() }
}

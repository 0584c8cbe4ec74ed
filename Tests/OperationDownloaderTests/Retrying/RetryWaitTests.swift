import Foundation
import Testing
@testable import OperationDownloader

/// The backoff wait: exactly one outcome, a cancel ends it at once (also one racing its start), driven by a
/// clock the test advances by hand; and the real clock (the shared DeadlineMonitor) fires and cancels.
@Suite struct RetryWaitTests {
    /// A clock that fires only when the test advances it.
    final class ManualClock: RetryClock, @unchecked Sendable {  // `lock` guards `now`, `timers`, `nextID`
        private final class Timer: RetryTimer, @unchecked Sendable {  // the clock's `lock` guards the entry
            let id: Int
            weak var clock: ManualClock?
            init(id: Int, clock: ManualClock) { self.id = id; self.clock = clock }
            func cancel() { clock?.remove(id) }
        }

        private let lock = NSLock()
        private var now: TimeInterval = 0
        private var timers: [Int: (deadline: TimeInterval, fire: @Sendable () -> Void)] = [:]
        private var nextID = 0

        func schedule(after seconds: TimeInterval, _ fire: @escaping @Sendable () -> Void) -> any RetryTimer {
            lock.withLock {
                nextID += 1
                timers[nextID] = (now + seconds, fire)
                return Timer(id: nextID, clock: self)
            }
        }

        fileprivate func remove(_ id: Int) { _ = lock.withLock { timers.removeValue(forKey: id) } }

        var pending: Int { lock.withLock { timers.count } }

        /// Moves time forward and fires what is due (outside the lock, earliest first).
        func advance(by seconds: TimeInterval) {
            let due: [@Sendable () -> Void] = lock.withLock {
                now += seconds
                let ready = timers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
                for (id, _) in ready { timers[id] = nil }
                return ready.map(\.value.fire)
            }
            for fire in due { fire() }
        }
    }

    final class Outcomes: @unchecked Sendable {  // `lock` guards `list`
        private let lock = NSLock()
        private var list: [RetryWait.Outcome] = []
        func add(_ outcome: RetryWait.Outcome) { lock.withLock { list.append(outcome) } }
        var all: [RetryWait.Outcome] { lock.withLock { list } }
    }

    @Test func elapsesAfterTheDelayAndOnlyOnce() {
        let clock = ManualClock()
        let wait = RetryWait(clock: clock)
        let outcomes = Outcomes()
        wait.begin(seconds: 2, completion: outcomes.add)
        #expect(wait.isWaiting)
        clock.advance(by: 1.9)
        #expect(outcomes.all.isEmpty)
        clock.advance(by: 0.1)
        #expect(outcomes.all == [.elapsed])
        #expect(!wait.isWaiting)
        wait.cancel()  // too late: nothing more
        clock.advance(by: 10)
        #expect(outcomes.all == [.elapsed])
    }

    @Test func cancelEndsTheWaitBeforeReturningAndTheTimerNeverFires() {
        let clock = ManualClock()
        let wait = RetryWait(clock: clock)
        let outcomes = Outcomes()
        wait.begin(seconds: 30, completion: outcomes.add)
        wait.cancel()
        #expect(outcomes.all == [.cancelled])
        #expect(clock.pending == 0, "the timer was not cancelled")
        clock.advance(by: 60)
        wait.cancel()
        #expect(outcomes.all == [.cancelled])
    }

    @Test func aCancelBeforeTheWaitBeganIsNotLost() {
        let clock = ManualClock()
        let wait = RetryWait(clock: clock)
        let outcomes = Outcomes()
        wait.cancel()
        wait.begin(seconds: 5, completion: outcomes.add)
        #expect(outcomes.all == [.cancelled])
        #expect(clock.pending == 0)
        wait.begin(seconds: 5, completion: outcomes.add)  // a second begin does nothing
        #expect(outcomes.all == [.cancelled])
    }

    @Test func aZeroDelayStillCompletesOnce() {
        let clock = ManualClock()
        let wait = RetryWait(clock: clock)
        let outcomes = Outcomes()
        wait.begin(seconds: 0, completion: outcomes.add)
        clock.advance(by: 0)
        #expect(outcomes.all == [.elapsed])
    }

    @Test func racingCancelsAndFiresGiveExactlyOneOutcome() async {
        let clock = ManualClock()
        let waits = (0..<200).map { _ in RetryWait(clock: clock) }
        let outcomes = (0..<200).map { _ in Outcomes() }
        for (wait, recorder) in zip(waits, outcomes) { wait.begin(seconds: 1, completion: recorder.add) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { clock.advance(by: 1) }
            for wait in waits { group.addTask { wait.cancel() } }
        }
        #expect(outcomes.allSatisfy { $0.all.count == 1 })
    }

    @Test func theRealClockFiresAndCancels() async {
        let monitor = DeadlineMonitor()
        let fired = Outcomes()
        let short = RetryWait(clock: DeadlineRetryClock(monitor: monitor))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            short.begin(seconds: 0.01) { outcome in
                fired.add(outcome)
                continuation.resume()
            }
        }
        #expect(fired.all == [.elapsed])

        let long = RetryWait(clock: DeadlineRetryClock(monitor: monitor))
        let cancelled = Outcomes()
        long.begin(seconds: 3600, completion: cancelled.add)
        #expect(monitor.pendingCount == 1)
        long.cancel()
        #expect(cancelled.all == [.cancelled])
        #expect(monitor.pendingCount == 0)
    }
}

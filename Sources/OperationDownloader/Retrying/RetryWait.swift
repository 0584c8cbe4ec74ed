import Foundation

/// The backoff wait between two attempts: a timer that a cancel ends at once.
///
/// Its completion runs exactly once: `.elapsed` on the clock's thread when the delay has passed, or
/// `.cancelled` on the cancelling thread, before `cancel()` returns, when a cancel came first. A wait that
/// was cancelled before it began completes with `.cancelled` inside `begin`, so a cancel racing the start of
/// a wait is never lost. One wait per object; the operation makes a new one for each backoff.
final class RetryWait: @unchecked Sendable {  // `lock` guards `state`
    enum Outcome: Equatable, Sendable {
        case elapsed
        case cancelled
    }

    private enum State {
        case idle
        case cancelledBeforeStart
        case waiting(timer: (any RetryTimer)?, completion: @Sendable (Outcome) -> Void)
        case done
    }

    private let lock = NSLock()
    private var state = State.idle
    private let clock: any RetryClock

    init(clock: any RetryClock = DeadlineRetryClock()) {
        self.clock = clock
    }

    /// Whether the wait is still running (begun, neither elapsed nor cancelled).
    var isWaiting: Bool {
        lock.withLock {
            if case .waiting = state { return true }
            return false
        }
    }

    /// Starts waiting `seconds`; `completion` runs once with the outcome. Calling it twice does nothing the
    /// second time.
    func begin(seconds: TimeInterval, completion: @escaping @Sendable (Outcome) -> Void) {
        let cancelledFirst: Bool = lock.withLock {
            switch state {
            case .idle:
                state = .waiting(timer: nil, completion: completion)
                return false
            case .cancelledBeforeStart:
                state = .done
                return true
            case .waiting, .done:
                return false
            }
        }
        if cancelledFirst {
            completion(.cancelled)
            return
        }
        // Scheduled outside the lock: a clock may fire at once, on this very thread.
        let timer = clock.schedule(after: seconds) { [weak self] in self?.finish(.elapsed) }
        let keep: Bool = lock.withLock {
            guard case .waiting(nil, let completion) = state else { return false }
            state = .waiting(timer: timer, completion: completion)
            return true
        }
        if !keep { timer.cancel() }
    }

    /// Ends the wait now with `.cancelled` (before returning); a no-op once it has elapsed or been cancelled.
    func cancel() {
        finish(.cancelled)
    }

    private func finish(_ outcome: Outcome) {
        let taken: (timer: (any RetryTimer)?, completion: @Sendable (Outcome) -> Void)? = lock.withLock {
            switch state {
            case .idle:
                if outcome == .cancelled { state = .cancelledBeforeStart }
                return nil
            case .waiting(let timer, let completion):
                state = .done
                return (timer, completion)
            case .cancelledBeforeStart, .done:
                return nil
            }
        }
        guard let taken else { return }
        if outcome == .cancelled { taken.timer?.cancel() }
        taken.completion(outcome)
    }
}

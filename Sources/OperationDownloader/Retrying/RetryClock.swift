import Foundation

/// Schedules the one-shot timers of retry waits; tests inject a clock they advance by hand.
protocol RetryClock: Sendable {
    /// Runs `fire` once, `seconds` from now, unless the returned timer is cancelled first.
    func schedule(after seconds: TimeInterval, _ fire: @escaping @Sendable () -> Void) -> any RetryTimer
}

/// A scheduled timer of a `RetryClock`.
protocol RetryTimer: Sendable {
    /// After it returns, `fire` has not run and never will, unless it was already running. Idempotent.
    func cancel()
}

/// The real clock: the process-wide `DeadlineMonitor` (one dispatch timer for every deadline, cheaper than a
/// timer source per wait).
struct DeadlineRetryClock: RetryClock {
    let monitor: DeadlineMonitor

    init(monitor: DeadlineMonitor = .shared) {
        self.monitor = monitor
    }

    func schedule(after seconds: TimeInterval, _ fire: @escaping @Sendable () -> Void) -> any RetryTimer {
        Registration(monitor: monitor, registration: monitor.register(after: seconds, handler: fire))
    }

    private struct Registration: RetryTimer {
        let monitor: DeadlineMonitor
        let registration: DeadlineMonitor.Registration

        func cancel() { monitor.unregister(registration) }
    }
}

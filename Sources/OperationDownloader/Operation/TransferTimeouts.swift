import Foundation

/// The timeouts of one transfer (SPEC §10): the idle timeout (`downloadTimeout`: no byte for that long) and
/// the optional cap on the whole transfer (`maximumDownloadDuration`).
///
/// Both start when the transfer starts and stop when it completes, so decoding never counts against them.
/// Any event of the transfer (response, body bytes, redirect, challenge) is activity; the operation records
/// its time (`DeadlineMonitor.now()`) in the attempt, under the lock it holds for the event anyway, and the
/// monitor reads it only when the idle deadline comes due. Enforced here, with the shared `DeadlineMonitor`,
/// for every transport: a transport's own timeout is only a backstop.
final class TransferTimeouts: @unchecked Sendable {  // `lock` guards `registrations` and `stopped`
    let monitor: DeadlineMonitor
    private let idle: TimeInterval
    private let maximumDuration: TimeInterval?
    private let lock = NSLock()
    private var registrations: [DeadlineMonitor.Registration] = []
    private var stopped = false

    init(monitor: DeadlineMonitor, idle: TimeInterval, maximumDuration: TimeInterval?) {
        self.monitor = monitor
        self.idle = idle
        self.maximumDuration = maximumDuration
    }

    /// Starts both clocks. `lastActivity`: the monitor time of the transfer's latest event; `onTimeout` runs (at
    /// most once per clock, on the monitor's queue) when one runs out. After `stop()`, starting does nothing.
    func start(lastActivity: @escaping @Sendable () -> UInt64, onTimeout: @escaping @Sendable () -> Void) {
        var made = [monitor.register(idle: idle, lastActivity: lastActivity, handler: onTimeout)]
        if let maximumDuration { made.append(monitor.register(after: maximumDuration, handler: onTimeout)) }
        let keep: Bool = lock.withLock {
            guard !stopped else { return false }
            registrations = made
            return true
        }
        // Stopped meanwhile (the transfer ended during start): never leave a registration behind.
        if !keep { made.forEach(monitor.unregister) }
    }

    /// Stops both clocks for good (transfer complete, or the operation finished). Idempotent.
    func stop() {
        let taken: [DeadlineMonitor.Registration] = lock.withLock {
            stopped = true
            defer { registrations = [] }
            return registrations
        }
        taken.forEach(monitor.unregister)
    }
}

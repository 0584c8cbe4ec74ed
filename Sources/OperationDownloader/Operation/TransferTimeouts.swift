import Foundation

/// The timeouts of one transfer (SPEC §10): the idle timeout (`downloadTimeout`: no byte for that long) and
/// the optional cap on the whole transfer (`maximumDownloadDuration`).
///
/// Both start when the transfer starts and stop when it completes, so decoding never counts against them.
/// Any event of the transfer (response, body bytes, redirect, challenge) is activity. Enforced here, with the
/// shared `DeadlineMonitor`, for every transport: a transport's own timeout is only a backstop.
final class TransferTimeouts: @unchecked Sendable {  // `lock` guards `lastActivity` and `registrations`
    private let monitor: DeadlineMonitor
    private let idle: TimeInterval
    private let maximumDuration: TimeInterval?
    private let lock = NSLock()
    private var lastActivity: UInt64 = 0
    private var registrations: [DeadlineMonitor.Registration] = []
    private var stopped = false

    init(monitor: DeadlineMonitor, idle: TimeInterval, maximumDuration: TimeInterval?) {
        self.monitor = monitor
        self.idle = idle
        self.maximumDuration = maximumDuration
    }

    /// Starts both clocks; `onTimeout` runs (at most once per clock, on the monitor's queue) when one runs out.
    /// After `stop()`, starting again does nothing.
    func start(onTimeout: @escaping @Sendable () -> Void) {
        let now = monitor.now()
        lock.withLock { lastActivity = now }
        var made = [monitor.register(idle: idle, lastActivity: { [weak self] in self?.lastActivityTime ?? 0 }, handler: onTimeout)]
        if let maximumDuration { made.append(monitor.register(after: maximumDuration, handler: onTimeout)) }
        let keep: Bool = lock.withLock {
            guard !stopped else { return false }
            registrations = made
            return true
        }
        // Stopped meanwhile (the transfer ended during start): never leave a registration behind.
        if !keep { made.forEach(monitor.unregister) }
    }

    /// Something arrived: the idle clock starts over. One timestamp; the monitor reads it only when due.
    func noteActivity() {
        let now = monitor.now()
        lock.withLock { lastActivity = now }
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

    private var lastActivityTime: UInt64 { lock.withLock { lastActivity } }
}

import Foundation

/// The timeouts of one transfer (Docs/Options.md): the idle timeout (`downloadTimeout`: no byte for that long) and
/// the optional cap on the whole transfer (`maximumDownloadDuration`).
///
/// Both start when the transfer starts and stop when it completes, so decoding never counts against them.
/// Any event of the transfer (response, body bytes, redirect, challenge) is activity; the operation records
/// its time (`DeadlineMonitor.now()`) in the attempt, under the lock it holds for the event anyway, and the
/// monitor reads it only when the idle deadline comes due. Enforced here, with the shared `DeadlineMonitor`,
/// for every transport: a transport's own timeout is only a backstop. A value: the running registrations
/// live in the attempt, under the operation's lock.
struct TransferTimeouts: Sendable {
    /// The registrations of a started transfer (nil: none, or stopped).
    struct Running: Sendable {
        var idle: DeadlineMonitor.Registration?
        var total: DeadlineMonitor.Registration?
    }

    let monitor: DeadlineMonitor
    let idle: TimeInterval
    let maximumDuration: TimeInterval?

    /// Starts both clocks. `lastActivity`: the monitor time of the transfer's latest event; `onTimeout` runs (at
    /// most once per clock, on the monitor's queue) when one runs out, with the error saying which.
    func start(
        lastActivity: @escaping @Sendable () -> UInt64, onTimeout: @escaping @Sendable (URLError) -> Void
    ) -> Running {
        // The errors are made only when a clock runs out: every download starts these clocks.
        let idle = idle
        return Running(
            idle: monitor.register(idle: idle, lastActivity: lastActivity) {
                onTimeout(Self.error("no data for \(Self.seconds(idle))"))
            },
            total: maximumDuration.map { limit in
                monitor.register(after: limit) {
                    onTimeout(Self.error("the download took longer than its \(Self.seconds(limit)) maximum"))
                }
            })
    }

    /// `.timedOut`, saying which clock ran out (shown by `ImageDownloaderError.description`).
    private static func error(_ text: String) -> URLError {
        URLError(.timedOut, userInfo: [NSLocalizedDescriptionKey: text])
    }

    /// "2 s", "0.5 s".
    static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() && abs(value) < 1e9 ? "\(Int(value)) s" : "\(value) s"
    }

    /// Stops the clocks of `running` (idempotent for the monitor).
    func stop(_ running: Running) {
        if let idle = running.idle { monitor.unregister(idle) }
        if let total = running.total { monitor.unregister(total) }
    }
}

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

    /// Starts both clocks of `transfer`. `client` tells the monitor the transfer's latest event, and is told (at
    /// most once per clock, on the monitor's queue) when one runs out, with the error saying which.
    func start(for transfer: any TransportTransfer, client: any TransferTimeoutClient) -> Running {
        Running(
            idle: monitor.register(idle: idle, owner: IdleClock(client: client, transfer: transfer, idle: idle)),
            total: maximumDuration.map { limit in
                monitor.register(after: limit) {
                    client.transfer(transfer, timedOut: Self.error("the download took longer than its \(Self.seconds(limit)) maximum"))
                }
            })
    }

    /// `.timedOut`, saying which clock ran out (shown by `ImageDownloaderError.description`).
    static func error(_ text: String) -> URLError {
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

/// Who runs a transfer's clocks: the operation.
protocol TransferTimeoutClient: AnyObject, Sendable {
    /// The monitor time of `transfer`'s latest event.
    func lastActivity(of transfer: any TransportTransfer) -> UInt64
    /// One of `transfer`'s clocks ran out; `error` says which.
    func transfer(_ transfer: any TransportTransfer, timedOut error: URLError)
}

/// The idle clock of one transfer, as the monitor's owner: one object per download where two closures were two.
private final class IdleClock: IdleDeadlineOwner {
    private let client: any TransferTimeoutClient
    private let transfer: any TransportTransfer
    private let idle: TimeInterval

    init(client: any TransferTimeoutClient, transfer: any TransportTransfer, idle: TimeInterval) {
        self.client = client
        self.transfer = transfer
        self.idle = idle
    }

    func lastActivity() -> UInt64 { client.lastActivity(of: transfer) }

    func idleDeadlinePassed() {
        // The error is made only when the clock runs out: every download starts this clock.
        client.transfer(transfer, timedOut: TransferTimeouts.error("no data for \(TransferTimeouts.seconds(idle))"))
    }
}

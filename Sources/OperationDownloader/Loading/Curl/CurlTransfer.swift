import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange through libcurl (TransportTransfer): the first request, then each redirect or
/// authentication retry its client asks for, each on a fresh easy-handle setup.
///
/// Any thread may call the `TransportTransfer` methods; they change `control` and post a command to the
/// curl thread. Everything else (the exchange, the callbacks, the events) happens on the curl thread, in
/// CurlTransfer+Events.swift. Every event first checks `control` under its lock: after `cancel()` returns,
/// no event begins.
final class CurlTransfer: TransportTransfer, @unchecked Sendable {  // `control` is Locked (NSLock: ThreadSanitizer sees it, not Mutex's futex); `stage` and the counters are curl-thread only
    /// What other threads change.
    struct Control {
        enum Phase { case created, running, cancelled, finished }
        var phase = Phase.created
        /// Held until the transfer ends or is cancelled (which breaks the client <-> transfer cycle).
        var client: (any TransferClient)?
        var readingSuspended = false
        var priority: Float
    }

    /// Where the transfer is, on the curl thread.
    enum Stage {
        /// Not started (or waiting for a slot).
        case idle
        case active(CurlExchange)
        /// Completed or cancelled; its slot is released.
        case done
    }

    let control: Locked<Control>
    let driver: CurlMultiDriver
    let request: TransferRequest

    // Curl thread only.
    var stage = Stage.idle
    /// Credentials refused so far (TransferChallenge.previousFailureCount), for the server and the proxy.
    var serverAuthenticationFailures = 0
    var proxyAuthenticationFailures = 0
    /// Redirects followed so far (a backstop caps them; the client's policy decides first).
    var redirectsFollowed = 0
    /// The proxy credential a 407 was answered with, used by every later request of the transfer.
    var proxyCredential: (user: String, password: String)?

    /// A transfer that cannot run (libcurl missing, transport invalidated) is a `FailedTransfer` instead.
    init(request: TransferRequest, client: any TransferClient, driver: CurlMultiDriver) {
        self.request = request
        self.driver = driver
        control = Locked(Control(client: client, priority: request.priority))
    }

    // MARK: - TransportTransfer (any thread)

    func resume() {
        let starts = control.withLock { control -> Bool in
            guard control.phase == .created else { return false }
            control.phase = .running
            return true
        }
        guard starts else { return }
        // The transport was invalidated since this transfer was made: the thread takes no more commands.
        guard !driver.post(.start(self)) else { return }
        completeOffThread(CurlErrorMapping.urlError(
            .cancelled, "the curl transport was invalidated", url: request.urlRequest.url))
    }

    func cancel() {
        let (wasRunning, client) = control.withLock { control -> (Bool, (any TransferClient)?) in
            let phase = control.phase
            guard phase == .created || phase == .running else { return (false, nil) }
            control.phase = .cancelled
            defer { control.client = nil }
            return (phase == .running, control.client)
        }
        _ = client  // released here, outside the lock: its deinit may call back into this transfer
        if wasRunning { driver.post(.cancel(self)) }
    }

    func suspendReading() {
        // The next body chunk pauses the transfer (the write callback checks this flag).
        control.withLock { $0.readingSuspended = true }
    }

    func resumeReading() {
        let post = control.withLock { control -> Bool in
            guard control.readingSuspended else { return false }
            control.readingSuspended = false
            return control.phase == .running
        }
        if post { driver.post(.resumeReading(self)) }
    }

    func setPriority(_ priority: Float) {
        let post = control.withLock { control -> Bool in
            control.priority = priority
            return control.phase == .running
        }
        if post { driver.post(.priority(self)) }
    }

    // MARK: - Control helpers

    var currentPriority: Float { control.withLock { $0.priority } }

    /// Whether events may still begin.
    var isRunning: Bool { control.withLock { $0.phase == .running } }

    /// The client when an event may begin now.
    var liveClient: (any TransferClient)? {
        control.withLock { $0.phase == .running ? $0.client : nil }
    }

    /// The transport shuts down with its transfers: like `cancel()`, without a command (the driver tears
    /// this transfer down itself).
    func cancelForShutdown() {
        let client = control.withLock { control -> (any TransferClient)? in
            guard control.phase == .created || control.phase == .running else { return nil }
            control.phase = .cancelled
            defer { control.client = nil }
            return control.client
        }
        _ = client
    }

    /// Delivers the completion, once, unless the transfer was cancelled.
    func complete(_ error: (any Error)?, metrics: TransferMetrics) {
        let client = control.withLock { control -> (any TransferClient)? in
            guard control.phase == .running else { return nil }
            control.phase = .finished
            defer { control.client = nil }
            return control.client
        }
        client?.transfer(self, didCompleteWith: error, metrics: metrics)
    }

    private func completeOffThread(_ error: any Error) {
        DispatchQueue.global().async { self.complete(error, metrics: TransferMetrics()) }
    }
}

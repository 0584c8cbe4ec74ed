import Foundation

/// Waiting until no download is queued or running: for batch jobs that must know the downloader has settled
/// (every operation finished, not only answered: a completion handler runs before its operation ends), and
/// for tests, which then need no polling.
extension ImageDownloader {
    /// Runs `body` on the callback queue once no download is queued or running (`currentDownloadCount == 0`):
    /// soon if none is; otherwise once the last operation has left the downloader (its callers answered, its
    /// transfer over). Downloads started meanwhile count too: `body` waits for them.
    public func whenIdle(_ body: @escaping @Sendable () -> Void) {
        let queue = callbackQueue
        let id = lock.withLock { idleWaits.reserve() }
        register(id) { queue.async(execute: body) }
    }

    /// Returns once no download is queued or running (`currentDownloadCount == 0`); at once if none is.
    /// Cancelling the calling task ends the wait early.
    public func waitUntilIdle() async {
        let id = lock.withLock { idleWaits.reserve() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                register(id) { continuation.resume() }
            }
        } onCancel: {
            let body = lock.withLock { idleWaits.cancel(id) }
            body?()
        }
    }

    /// Runs `body` now if the downloader is idle or the wait was cancelled, else keeps it for the last
    /// operation's end, which runs it on its own thread (so `body` only hands the news on: it resumes a
    /// continuation or queues a block).
    private func register(_ id: UInt64, _ body: @escaping @Sendable () -> Void) {
        let runNow = lock.withLock { idleWaits.wait(id, body, idle: liveOperations == 0) }
        if runNow { body() }
    }
}

/// The waits for an idle downloader, each in one phase (kept under the downloader's lock). An id is reserved
/// before its body exists, so a cancel arriving first is not lost; every path removes the id again.
struct IdleWaits {
    private enum Phase {
        case reserved
        case cancelled
        case waiting(@Sendable () -> Void)
    }

    private var phases: [UInt64: Phase] = [:]
    private var nextID: UInt64 = 0

    mutating func reserve() -> UInt64 {
        nextID += 1
        phases[nextID] = .reserved
        return nextID
    }

    /// True when the body must run now (idle already, or cancelled before it was registered).
    mutating func wait(_ id: UInt64, _ body: @escaping @Sendable () -> Void, idle: Bool) -> Bool {
        guard case .reserved = phases[id], !idle else {
            phases[id] = nil
            return true
        }
        phases[id] = .waiting(body)
        return false
    }

    /// The body to run for a cancelled wait, if it was waiting (a reserved one runs when it registers).
    mutating func cancel(_ id: UInt64) -> (@Sendable () -> Void)? {
        switch phases[id] {
        case .reserved:
            phases[id] = .cancelled
            return nil
        case .waiting(let body):
            phases[id] = nil
            return body
        case .cancelled, nil:
            return nil
        }
    }

    /// Every waiting body, removed (the downloader just became idle), in the order the waits began; reserved ids stay.
    mutating func takeWaiting() -> [@Sendable () -> Void] {
        guard !phases.isEmpty else { return [] }
        // In the order they were registered (ids grow), not the dictionary's: a `whenIdle` block registered
        // before a `waitUntilIdle` is queued before that wait returns (seen under TSan: a test draining the
        // callback queue right after the wait ran before the block was queued).
        let ready = phases.compactMap { id, phase -> (UInt64, @Sendable () -> Void)? in
            guard case .waiting(let body) = phase else { return nil }
            return (id, body)
        }.sorted { $0.0 < $1.0 }
        for (id, _) in ready { phases[id] = nil }
        return ready.map(\.1)
    }
}

import Foundation

/// Bounds how many final (full-size) decodes run at once across all downloads of the process.
///
/// Each operation decodes on its own serial coder queue, so without a bound every running download could
/// hold a full-size bitmap at the same moment (6 × 48 MB for 12 MP JPEGs) although only as many decodes as
/// there are cores make progress. Waiting work does not block a thread: it is kept in FIFO order and sent to
/// its own queue when a slot frees.
final class DecodeLimiter: @unchecked Sendable {  // `lock` guards `running` and `waiting`
    /// The process-wide limiter: one decode per core.
    static let shared = DecodeLimiter(limit: ProcessInfo.processInfo.activeProcessorCount)

    private let limit: Int
    private let lock = NSLock()
    private var running = 0
    private var waiting: [(queue: DispatchQueue, work: @Sendable () -> Void)] = []

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `work` on `queue` as soon as fewer than `limit` works are running.
    func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let startNow: Bool = lock.withLock {
            if running < limit {
                running += 1
                return true
            }
            waiting.append((queue, work))
            return false
        }
        if startNow { dispatch(work, on: queue) }
    }

    private func dispatch(_ work: @escaping @Sendable () -> Void, on queue: DispatchQueue) {
        queue.async { [self] in
            work()
            let next: (queue: DispatchQueue, work: @Sendable () -> Void)? = lock.withLock {
                if waiting.isEmpty {
                    running -= 1
                    return nil
                }
                return waiting.removeFirst()  // the slot passes straight to the next one
            }
            if let next { dispatch(next.work, on: next.queue) }
        }
    }
}

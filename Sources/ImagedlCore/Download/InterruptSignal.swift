import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ctrl-C for the whole process: one SIGINT dispatch source, made on first use and never cancelled, that tells
/// every command running at the time.
///
/// Why not a source per command: SIGINT is process-wide anyway, and sources for the same signal armed and
/// cancelled as commands come and go (tests run many commands at once in one process) churn libdispatch's
/// epoll bookkeeping, which is not safe under concurrent churn on Linux (swift-corelibs-libdispatch#949).
final class InterruptSignal: @unchecked Sendable {  // `handlers` and `nextID` guarded by `lock`
    static let shared = InterruptSignal()

    private let lock = NSLock()
    private var handlers: [Int: @Sendable () -> Void] = [:]
    private var nextID = 0
    private let source: any DispatchSourceSignal

    private init() {
        signal(SIGINT, SIG_IGN)  // delivered through the dispatch source instead of ending the process
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "imagedl.interrupt"))
        source.setEventHandler { [unowned self] in  // `shared` lives as long as the process
            for handler in lock.withLock({ Array(handlers.values) }) { handler() }
        }
        source.resume()
    }

    /// Calls `handler` on each Ctrl-C until `unsubscribe` with the returned identifier.
    func subscribe(_ handler: @escaping @Sendable () -> Void) -> Int {
        lock.withLock {
            nextID += 1
            handlers[nextID] = handler
            return nextID
        }
    }

    func unsubscribe(_ id: Int) {
        _ = lock.withLock { handlers.removeValue(forKey: id) }
    }
}

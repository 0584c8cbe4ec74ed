import Foundation
import Dispatch

/// One timer for every download's total timeout (URLSession on Linux ignores the resource timeout).
///
/// Why shared: creating, scheduling and cancelling a `DispatchSourceTimer` per download cost about 30 k
/// instructions each (callgrind, Docs/Benchmarks.md). Here an operation registers a deadline and a handler
/// at start and unregisters at finish; a single timer source fires at the earliest deadline and runs the
/// expired handlers outside the lock, on the monitor's serial queue.
///
/// The source is created and resumed in `init` and lives as long as the monitor (libdispatch traps when a
/// never-resumed source is released). Once it has fired with nothing left it is scheduled at `distantFuture`.
/// Unregistering does not re-arm: the timer may then fire once for nothing and re-arms at the next deadline,
/// which is cheaper than rescheduling on every finish.
final class DeadlineMonitor: @unchecked Sendable {  // `lock` guards `entries`, `nextID` and `armedAt`
    /// The monitor every download uses.
    static let shared = DeadlineMonitor()

    /// Identifies one registration, to unregister it.
    struct Registration: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let deadline: UInt64
        let handler: @Sendable () -> Void
    }

    private let lock = NSLock()
    private let timer: any DispatchSourceTimer
    private var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 0
    /// The deadline the timer is scheduled for (uptime nanoseconds); `UInt64.max` when idle.
    private var armedAt = UInt64.max

    init(queue: DispatchQueue = DispatchQueue(label: "OperationDownloader.deadlines")) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
    }

    deinit {
        timer.cancel()
    }

    /// Registers `handler` to run once, `seconds` from now, unless unregistered first.
    /// A non-finite or huge interval never fires.
    func register(after seconds: TimeInterval, handler: @escaping @Sendable () -> Void) -> Registration {
        let now = DispatchTime.now().uptimeNanoseconds
        let deadline: UInt64
        if seconds.isNaN || seconds <= 0 {
            deadline = now
        } else if seconds >= 1e9 {  // over 31 years: never (and no overflow below)
            deadline = UInt64.max
        } else {
            let (sum, overflow) = now.addingReportingOverflow(UInt64(seconds * 1e9))
            deadline = overflow ? UInt64.max : sum
        }
        return lock.withLock {
            nextID &+= 1
            entries[nextID] = Entry(deadline: deadline, handler: handler)
            if deadline < armedAt { arm(deadline) }
            return Registration(id: nextID)
        }
    }

    /// Removes a registration; its handler will not run unless it is already running. Idempotent.
    /// Never re-arms (even when nothing is left): rescheduling a dispatch timer wakes libdispatch's timer
    /// thread, and one wasted wake-up at the old deadline is cheaper than two reschedules per download.
    func unregister(_ registration: Registration) {
        _ = lock.withLock { entries.removeValue(forKey: registration.id) }
    }

    /// How many registrations are waiting (for tests).
    var pendingCount: Int { lock.withLock { entries.count } }

    /// Under `lock`: schedules the one-shot timer at `deadline` (`UInt64.max`: never).
    private func arm(_ deadline: UInt64) {
        armedAt = deadline
        timer.schedule(deadline: deadline == UInt64.max ? .distantFuture : DispatchTime(uptimeNanoseconds: deadline))
    }

    /// On the monitor's queue: runs every expired handler, earliest first, and re-arms for the rest.
    private func fire() {
        let due: [Entry] = lock.withLock {
            let now = DispatchTime.now().uptimeNanoseconds
            var expired: [UInt64] = []
            var earliest = UInt64.max
            for (id, entry) in entries {
                if entry.deadline <= now {
                    expired.append(id)
                } else {
                    earliest = min(earliest, entry.deadline)
                }
            }
            let taken = expired.compactMap { entries.removeValue(forKey: $0) }
            arm(earliest)
            return taken.sorted { $0.deadline < $1.deadline }
        }
        for entry in due { entry.handler() }
    }
}

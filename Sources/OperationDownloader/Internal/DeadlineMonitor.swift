import Foundation
import Dispatch

/// One timer for every download's timeouts (URLSession on Linux ignores the resource timeout, and a transport's
/// own timeout cannot tell transfer time from decoding time).
///
/// Why shared: creating, scheduling and cancelling a `DispatchSourceTimer` per download was one of the largest
/// costs of a small download (Docs/Benchmarks.md). Here an operation registers a deadline and a handler
/// at start and unregisters at finish; a single timer fires at the earliest deadline and runs the expired
/// handlers outside the lock.
///
/// Two kinds of registration:
/// - a fixed deadline (`register(after:handler:)`): `maximumDownloadDuration`;
/// - an idle deadline (`register(idle:owner:)`): fires once the owner's `lastActivity()` is more than `idle`
///   ago. Activity is never reported to the monitor: when the deadline comes, the monitor reads the
///   last activity and, if there was some since, moves the deadline to last activity + idle. So a chunk of
///   body costs its owner one timestamp, and the monitor one check per idle period.
///
/// Unregistering does not re-arm: the timer may then fire once for nothing and re-arms at the next deadline,
/// which is cheaper than rescheduling on every finish. The clock is injectable: tests drive a manual one.
final class DeadlineMonitor: @unchecked Sendable {  // `lock` guards `entries`, `nextID` and `armedAt`
    /// The monitor every download uses unless one is injected.
    static let shared = DeadlineMonitor()

    /// Identifies one registration, to unregister it.
    struct Registration: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        var deadline: UInt64
        let action: Action
    }

    private enum Action {
        case fixed(@Sendable () -> Void)
        /// The interval (ns) and the owner, which records its last activity and is told when it is too long ago.
        case idle(interval: UInt64, owner: any IdleDeadlineOwner)

        func run() {
            switch self {
            case .fixed(let handler): handler()
            case .idle(_, let owner): owner.idleDeadlinePassed()
            }
        }
    }

    private let lock = NSLock()
    private let clock: any DeadlineClock
    // Only touched under `lock`: no dynamic exclusivity check needed.
    @exclusivity(unchecked) private var entries: [UInt64: Entry] = [:]
    @exclusivity(unchecked) private var nextID: UInt64 = 0
    /// The deadline the timer is scheduled for (clock nanoseconds); `UInt64.max` when idle.
    @exclusivity(unchecked) private var armedAt = UInt64.max

    /// A monitor on the real clock, firing on `queue`.
    convenience init(queue: DispatchQueue = DispatchQueue(label: "OperationDownloader.deadlines")) {
        self.init(clock: DispatchTimerClock(queue: queue))
    }

    /// A monitor on `clock` (tests pass a manual clock and advance it themselves).
    init(clock: any DeadlineClock) {
        self.clock = clock
        clock.setHandler { [weak self] in self?.fire() }
    }

    /// The monitor's time, in nanoseconds: what owners of idle registrations record as their last activity.
    func now() -> UInt64 { clock.now() }

    /// Registers `handler` to run once, `seconds` from now, unless unregistered first.
    /// A non-finite or huge interval never fires.
    func register(after seconds: TimeInterval, handler: @escaping @Sendable () -> Void) -> Registration {
        let now = clock.now()
        return insert(Entry(deadline: Self.deadline(now: now, after: seconds), action: .fixed(handler)))
    }

    /// Registers `owner` to be told once it recorded no activity for `seconds`: its `lastActivity()` returns
    /// the monitor time (`now()`) of its latest activity. The idle period starts now. An owner object rather
    /// than two closures: every download registers one, and the closures' contexts were two allocations.
    func register(idle seconds: TimeInterval, owner: any IdleDeadlineOwner) -> Registration {
        let now = clock.now()
        let deadline = Self.deadline(now: now, after: seconds)
        let interval = deadline == UInt64.max ? UInt64.max : deadline - now
        return insert(Entry(deadline: deadline, action: .idle(interval: interval, owner: owner)))
    }

    private func insert(_ entry: Entry) -> Registration {
        lock.withLock {
            nextID &+= 1
            entries[nextID] = entry
            if entry.deadline < armedAt { arm(entry.deadline) }
            return Registration(id: nextID)
        }
    }

    private static func deadline(now: UInt64, after seconds: TimeInterval) -> UInt64 {
        if seconds.isNaN || seconds <= 0 { return now }
        if seconds >= 1e9 { return UInt64.max }  // over 31 years: never (and no overflow below)
        let (sum, overflow) = now.addingReportingOverflow(UInt64(seconds * 1e9))
        return overflow ? UInt64.max : sum
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
        clock.schedule(at: deadline)
    }

    /// On the clock's queue: runs every expired handler, earliest first, and re-arms for the rest. Idle
    /// registrations with recent activity move instead of firing. The owners' `lastActivity` runs outside
    /// the lock (it takes the owner's lock), and an unregister in between wins.
    private func fire() {
        let now = clock.now()
        let expired: [(UInt64, Entry)] = lock.withLock {
            armedAt = UInt64.max
            return entries.filter { $0.value.deadline <= now }.map { ($0.key, $0.value) }
        }
        var moved: [(UInt64, UInt64)] = []
        var due: [(UInt64, UInt64)] = []
        for (id, entry) in expired {
            if case .idle(let interval, let owner) = entry.action {
                let (next, overflow) = owner.lastActivity().addingReportingOverflow(interval)
                if !overflow && next > now {
                    moved.append((id, next))
                    continue
                }
            }
            due.append((id, entry.deadline))
        }
        let actions: [Action] = lock.withLock {
            for (id, next) in moved { entries[id]?.deadline = next }
            let taken = due.sorted { $0.1 < $1.1 }.compactMap { entries.removeValue(forKey: $0.0)?.action }
            let earliest = entries.values.lazy.map(\.deadline).min() ?? UInt64.max
            if earliest < armedAt { arm(earliest) }
            return taken
        }
        for action in actions { action.run() }
    }
}

/// The owner of an idle registration (`DeadlineMonitor.register(idle:owner:)`).
protocol IdleDeadlineOwner: AnyObject, Sendable {
    /// The monitor time (`DeadlineMonitor.now()`) of the owner's latest activity; read when the deadline comes.
    func lastActivity() -> UInt64
    /// No activity for the registered interval. Runs once, on the monitor's queue.
    func idleDeadlinePassed()
}

/// The monitor's notion of time and its one timer.
protocol DeadlineClock: AnyObject, Sendable {
    /// Monotonic nanoseconds.
    func now() -> UInt64
    /// Calls the handler at (or after) `deadline`, replacing the previous schedule; `UInt64.max`: never.
    func schedule(at deadline: UInt64)
    /// Set once, by the monitor, before any `schedule`.
    func setHandler(_ handler: @escaping @Sendable () -> Void)
}

/// The real clock: uptime nanoseconds and one dispatch timer source.
///
/// The source is created and resumed in `init` and lives as long as the clock (libdispatch traps when a
/// never-resumed source is released).
final class DispatchTimerClock: DeadlineClock, @unchecked Sendable {  // `timer` is thread-safe; the handler is set once before use
    private let timer: any DispatchSourceTimer

    init(queue: DispatchQueue) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .distantFuture)
        timer.resume()
    }

    deinit {
        timer.cancel()
    }

    func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func schedule(at deadline: UInt64) {
        timer.schedule(deadline: deadline == UInt64.max ? .distantFuture : DispatchTime(uptimeNanoseconds: deadline))
    }

    func setHandler(_ handler: @escaping @Sendable () -> Void) {
        timer.setEventHandler(handler: handler)
    }
}

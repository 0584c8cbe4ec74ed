import Foundation

/// Which primaries a Sentinel or Cluster deployment has lost, since when, and whether a replacement is still
/// worth waiting for: for `window` seconds after the loss a request on a lost primary is "failing over" (the
/// flights wait for it rather than every process fetching the URL), after that it is "down" (the cache steps
/// aside, as for a dead standalone server). Threads that wait for a failover's end sleep on a condition that a
/// recovery signals.
final class RedisFailoverWatch: @unchecked Sendable {  // `lostSince` guarded by `condition`
    let window: TimeInterval
    private let condition = NSCondition()
    private var lostSince: [RedisNodeAddress: UInt64] = [:]

    init(window: TimeInterval) {
        self.window = window
    }

    /// `node` stopped answering as a primary; true when this is news (the loss starts now).
    @discardableResult
    func lost(_ node: RedisNodeAddress) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard lostSince[node] == nil else { return false }
        lostSince[node] = RedisDeadline.now
        return true
    }

    /// A primary answers for what `node` served (itself again, or its replacement).
    func recovered(_ node: RedisNodeAddress) {
        condition.lock()
        if lostSince.removeValue(forKey: node) != nil { condition.broadcast() }
        condition.unlock()
    }

    /// Every loss is over (a new map, a new primary).
    func recoveredAll() {
        condition.lock()
        if !lostSince.isEmpty {
            lostSince.removeAll()
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Why a request for `node` gets no reply: failing over within the window, else down.
    func unavailable(_ node: RedisNodeAddress, _ reason: String) -> RedisUnavailable {
        condition.lock()
        defer { condition.unlock() }
        let since = lostSince[node] ?? RedisDeadline.now
        return withinWindow(since) ? .failingOver(reason) : .down(reason)
    }

    func isLost(_ node: RedisNodeAddress) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return lostSince[node] != nil
    }

    /// Whether any loss is still within its window.
    var isFailingOver: Bool {
        condition.lock()
        defer { condition.unlock() }
        return lostSince.values.contains { withinWindow($0) }
    }

    /// Returns once no loss is within its window, or at `deadline`.
    func wait(until deadline: RedisDeadline) {
        condition.lock()
        defer { condition.unlock() }
        // Bounded: each turn sleeps until a signal, the next window's end or the deadline, and stops at the deadline.
        while !deadline.hasPassed {
            let open = lostSince.values.filter { withinWindow($0) }
            guard let earliest = open.min() else { return }
            let windowEnd = RedisDeadline(uptime: earliest + RedisDeadline.nanoseconds(window))
            let wake = min(windowEnd, deadline)
            _ = condition.wait(until: Date(timeIntervalSinceNow: max(0.001, wake.secondsLeft)))
        }
    }

    /// Wakes the waiters (a recovery the caller recorded another way).
    func signal() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    private func withinWindow(_ since: UInt64) -> Bool {
        RedisDeadline.now < since + RedisDeadline.nanoseconds(window)
    }
}

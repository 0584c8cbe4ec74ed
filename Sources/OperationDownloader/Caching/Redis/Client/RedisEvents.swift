import Foundation

/// Everything the Redis client reports goes through here: warnings for people, each cause once per cache (an
/// outage once per node and outage, a refusal — OOM, READONLY, WRONGTYPE, a foreign lock — once per kind), and
/// the events a metrics sink counts. Issue 38's `od_redis_errors_total{kind}` belongs in `error(_:node:)`, and
/// `od_redis_breaker_open` in `breaker(_:open:)`: every error path and every breaker change of the client
/// calls one of these two.
final class RedisEvents: @unchecked Sendable {  // `warned`, `openNodes`, `counts` guarded by `lock`
    /// Distinct causes warned about at most (a server inventing error codes cannot grow the set without bound).
    static let maximumDistinctWarnings = 64

    private let lock = NSLock()
    /// Where warnings go: the cache's (`HTTPImageCache.warningHandler`, standard error without one).
    let warnings: HTTPCacheWarnings
    private var warned: Set<String> = []
    private var openNodes: Set<RedisNodeAddress> = []
    private var counts: [String: Int] = [:]

    init(warnings: HTTPCacheWarnings = HTTPCacheWarnings()) {
        self.warnings = warnings
    }

    /// Nodes whose breaker is open now.
    var nodesUnavailable: Set<RedisNodeAddress> { lock.withLock { openNodes } }

    /// A failed call: a connection failure (`kind` is `RedisConnectionFailure.Kind`'s raw value) or an error reply
    /// (`kind` is its code, lower-cased: "oom", "readonly", "wrongtype", "err", …).
    func error(_ kind: String, node: RedisNodeAddress?) {
        lock.withLock {
            let key = counts[kind] != nil || counts.count < Self.maximumDistinctWarnings ? kind : "other"
            counts[key, default: 0] += 1
        }
    }

    /// Failed calls so far, by kind (what `error(_:node:)` counted).
    var errorCounts: [String: Int] { lock.withLock { counts } }

    /// A node's breaker opened (the start of an outage) or closed (it answers again).
    func breaker(_ node: RedisNodeAddress, open: Bool) {
        lock.withLock { if open { openNodes.insert(node) } else { openNodes.remove(node) } }
    }

    /// Warns with `message`, unless `cause` was warned about already (nil: always).
    func warn(_ message: String, once cause: String? = nil) {
        let due: Bool = lock.withLock {
            guard let cause else { return true }
            guard !warned.contains(cause), warned.count < Self.maximumDistinctWarnings else { return false }
            warned.insert(cause)
            return true
        }
        if due { warnings.emit(message) }
    }

    /// Lets `cause` be warned about again (its episode ended: the node answers, the server takes writes again).
    func resolved(_ cause: String) {
        lock.withLock { _ = warned.remove(cause) }
    }
}

import Foundation

/// Everything the Redis client reports goes through here: warnings for people, each cause once per cache (an
/// outage once per node and outage, a refusal — OOM, READONLY, WRONGTYPE, a foreign lock — once per kind), and
/// the events a metrics sink counts (`od_redis_errors_total{kind}` in `error(_:node:)`, `od_redis_breaker_open` in
/// `breaker(_:open:)`): every error path and every breaker change of the client calls one of these two.
final class RedisEvents: @unchecked Sendable {  // `warned`, `openNodes`, `counts` guarded by `lock`
    /// Distinct causes warned about at most (a server inventing error codes cannot grow the set without bound).
    static let maximumDistinctWarnings = 64

    private let lock = NSLock()
    /// The cache's reports: its metrics sink, log hook and warning handler (standard error without them).
    let telemetry: CacheTelemetry
    private var warned: Set<String> = []
    private var openNodes: Set<RedisNodeAddress> = []
    private var counts: [String: Int] = [:]

    init(telemetry: CacheTelemetry = CacheTelemetry()) {
        self.telemetry = telemetry
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
        telemetry.redisError(Self.metricKind(kind))
    }

    /// The bounded `kind` label of `od_redis_errors_total` (Docs/Observability.md) for a failure's kind or a reply's
    /// error code.
    static func metricKind(_ kind: String) -> String {
        switch RedisConnectionFailure.Kind(rawValue: kind) {
        case .unreachable: return "connect"
        case .timeout: return "timeout"
        case .closed, .protocolError: return "io"
        case .refused: return "auth"
        // A node that answers as a replica where the primary was asked for: a reply it should not have given.
        case .notPrimary, nil: return "reply"
        }
    }

    /// Failed calls so far, by kind (what `error(_:node:)` counted).
    var errorCounts: [String: Int] { lock.withLock { counts } }

    /// A node's breaker opened (the start of an outage) or closed (it answers again).
    func breaker(_ node: RedisNodeAddress, open: Bool) {
        // The gauge counts caches in an outage: it moves when the first node's breaker opens and the last closes.
        let change: Bool? = lock.withLock {
            let wasOpen = !openNodes.isEmpty
            if open { openNodes.insert(node) } else { openNodes.remove(node) }
            return wasOpen == !openNodes.isEmpty ? nil : !wasOpen
        }
        if let change { telemetry.redisBreaker(opened: change) }
    }

    /// A node answers again after an outage: its breaker closed (`breaker(_:open:)`), and an info message says so.
    func nodeIsBack(_ node: RedisNodeAddress, displayName: String) {
        breaker(node, open: false)
        telemetry.logger.log(.info, "HTTPImageCache: Redis at \(displayName) is back; the cache uses it again",
                             metadata: ["redis.endpoint": displayName])
    }

    /// Warns with `message`, unless `cause` was warned about already (nil: always).
    func warn(_ message: String, once cause: String? = nil, metadata: [String: String] = [:]) {
        let due: Bool = lock.withLock {
            guard let cause else { return true }
            guard !warned.contains(cause), warned.count < Self.maximumDistinctWarnings else { return false }
            warned.insert(cause)
            return true
        }
        if due { telemetry.logger.log(.warning, message, metadata: metadata) }
    }

    /// Lets `cause` be warned about again (its episode ended: the node answers, the server takes writes again).
    func resolved(_ cause: String) {
        lock.withLock { _ = warned.remove(cause) }
    }
}

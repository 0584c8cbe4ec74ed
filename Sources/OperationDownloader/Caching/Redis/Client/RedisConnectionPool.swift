import Foundation

/// The connection settings every node's pool of one cache shares (from `RedisCacheOptions`).
struct RedisClientSettings: Sendable {
    var connectTimeout: TimeInterval
    var commandTimeout: TimeInterval
    var maximumIdleConnections: Int
    var retryInterval: TimeInterval
    var maximumRetryInterval: TimeInterval
    /// A probe keeps trying an unavailable node for this long after the last call that wanted it.
    var probeWhileWantedFor: TimeInterval = 60

    init(_ options: RedisCacheOptions) {
        connectTimeout = options.connectTimeout
        commandTimeout = options.commandTimeout
        maximumIdleConnections = max(1, options.maximumIdleConnections)
        retryInterval = options.retryInterval
        maximumRetryInterval = options.maximumRetryInterval
    }
}

/// Why a pool did not run a call.
struct RedisPoolFailure: Error, Sendable {
    /// The node's breaker is open (an outage is known): refused without trying.
    let refusedByBreaker: Bool
    let reason: String
}

/// The connections to one Redis node and its circuit breaker: idle connections are reused (at most
/// `maximumIdleConnections` kept; one that the server closed or wrote to unasked is dropped), a new one is opened
/// when all are busy. A failure opens the breaker: every call is then refused at once, one warning says so,
/// and a probe in the background (never a download) tries the node after the back-off, doubling it after each
/// failed try; the probe's success closes the breaker, so calls use the node again at once. The probe stops
/// when nobody has wanted the node for a while (`probeWhileWantedFor`), and starts again with the next call.
final class RedisConnectionPool: @unchecked Sendable {  // `idle`, `breaker`, `probing`, `lastDemand` guarded by `lock`
    let endpoint: RedisEndpoint
    let role: RedisConnection.Role
    private let settings: RedisClientSettings
    private let events: RedisEvents
    private let lock = NSLock()
    private var idle: [RedisConnection] = []
    private var breaker: RedisCircuitBreaker
    private var probing = false
    private var lastDemand: UInt64 = 0

    init(endpoint: RedisEndpoint, role: RedisConnection.Role, settings: RedisClientSettings, events: RedisEvents) {
        self.endpoint = endpoint
        self.role = role
        self.settings = settings
        self.events = events
        breaker = RedisCircuitBreaker(initialInterval: settings.retryInterval, maximumInterval: settings.maximumRetryInterval)
    }

    var address: RedisNodeAddress { endpoint.address }

    /// Whether calls go to the node now (its breaker is closed).
    var isAvailable: Bool { lock.withLock { breaker.isClosed } }

    /// Runs `commands` as one pipeline on a pooled connection: their replies in order, or why not (the breaker is
    /// open, or this call failed: then it opens).
    func pipeline(_ commands: [[Data]], limits: [RESPLimits]? = nil) -> Result<[RedisReply], RedisPoolFailure> {
        guard !commands.isEmpty else { return .success([]) }
        let (closed, reused, startProbe): (Bool, RedisConnection?, Bool) = lock.withLock {
            lastDemand = RedisDeadline.now
            guard breaker.isClosed else {
                defer { probing = true }
                return (false, nil, !probing)
            }
            while let connection = idle.popLast() {
                if connection.isReusable { return (true, connection, false) }
            }
            return (true, nil, false)
        }
        guard closed else {
            if startProbe { scheduleProbe(after: 0) }
            return .failure(RedisPoolFailure(refusedByBreaker: true, reason: "\(endpoint.displayName) is unavailable (breaker open)"))
        }
        do throws(RedisConnectionFailure) {
            let connection: RedisConnection
            if let reused { connection = reused } else { connection = try makeConnection() }
            let replies = try connection.pipeline(commands, limits: limits)
            let reopened = lock.withLock {
                if idle.count < settings.maximumIdleConnections { idle.append(connection) }
                return breaker.succeeded()
            }
            if reopened { events.nodeIsBack(address, displayName: endpoint.displayName) }
            return .success(replies)
        } catch {
            failed(error)
            return .failure(RedisPoolFailure(refusedByBreaker: false, reason: error.reason))
        }
    }

    /// The node failed in a way only the caller saw (a Sentinel primary answering READONLY: it was demoted).
    func failed(_ failure: RedisConnectionFailure) {
        events.error(failure.kind.rawValue, node: address)
        let (transition, dropped): (RedisCircuitBreaker.Transition, [RedisConnection]) = lock.withLock {
            let transition = breaker.failed(now: RedisDeadline.now)
            // The idle connections share the fate of the one that failed (a restarted or unreachable server).
            defer { idle.removeAll() }
            if case .opened = transition { probing = true }
            return (transition, idle)
        }
        _ = dropped
        if case .opened(let retryIn) = transition {
            events.breaker(address, open: true)
            events.warn("HTTPImageCache: Redis at \(endpoint.displayName) is unavailable (\(failure.reason)); downloads go to the "
                + "origin without it, retrying in \(Self.seconds(retryIn))",
                        metadata: ["redis.endpoint": endpoint.displayName, "error": failure.reason, "retry_in": Self.seconds(retryIn)])
            scheduleProbe(after: retryIn)
        }
    }

    private func makeConnection() throws(RedisConnectionFailure) -> RedisConnection {
        try RedisConnection(endpoint: endpoint, connectTimeout: settings.connectTimeout, commandTimeout: settings.commandTimeout, role: role)
    }

    // MARK: The probe

    private func scheduleProbe(after seconds: TimeInterval) {
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [weak self] in self?.probe() }
    }

    /// One try of the node, in the background; schedules the next one while the breaker stays open and the node
    /// is wanted.
    private func probe() {
        let due: TimeInterval? = lock.withLock {
            guard !breaker.isClosed else {
                probing = false
                return nil
            }
            let now = RedisDeadline.now
            if now > lastDemand + RedisDeadline.nanoseconds(settings.probeWhileWantedFor) {
                probing = false
                return nil
            }
            if breaker.admit(now: now) { return 0 }
            return breaker.nextProbe.map { TimeInterval($0 > now ? $0 - now : 0) / 1e9 } ?? 0
        }
        guard let due else { return }
        if due > 0 { return scheduleProbe(after: due) }
        do throws(RedisConnectionFailure) {
            let connection = try makeConnection()
            // Any reply will do (an ACL user may lack PING): the node answers, logged in, with the right role.
            _ = try connection.command([Data("PING".utf8)])
            let closed = lock.withLock {
                defer { probing = false }
                if idle.count < settings.maximumIdleConnections { idle.append(connection) }
                return breaker.succeeded()
            }
            if closed { events.nodeIsBack(address, displayName: endpoint.displayName) }
        } catch {
            events.error(error.kind.rawValue, node: address)
            let retryIn: TimeInterval? = lock.withLock {
                if case .stillOpen(let next) = breaker.failed(now: RedisDeadline.now) { return next }
                return nil
            }
            scheduleProbe(after: retryIn ?? settings.retryInterval)
        }
    }

    private static func seconds(_ value: TimeInterval) -> String {
        value < 1 ? "\(Int(value * 1000)) ms" : "\(Int(value.rounded())) s"
    }
}

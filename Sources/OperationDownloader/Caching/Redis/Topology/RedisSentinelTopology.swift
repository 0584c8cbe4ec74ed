import Foundation

/// A primary that Redis Sentinel manages (`redis-sentinel://…/mastername`): the Sentinels are asked which node
/// is the primary (`SENTINEL get-master-addr-by-name`), every connection to it checks `ROLE` (a demoted primary
/// is never written to), and the Sentinels are asked again when the primary stops answering or answers
/// `READONLY` (it was demoted). Between the loss and the new primary's first answer, requests are "failing
/// over" for up to `RedisFailoverWatch.window`, then "down".
///
/// The client does not subscribe to `+switch-master`: a subscription needs a connection and a thread per
/// process that wait forever, and a failover is seen anyway by the first request that meets the old primary
/// (refused, reset, or READONLY) — which is also the only moment it matters.
final class RedisSentinelTopology: RedisTopology, @unchecked Sendable {  // the `var`s guarded by `lock`
    private let sentinels: [RedisNodeAddress]
    private let primaryName: String
    private let deployment: RedisDeployment
    private let settings: RedisClientSettings
    private let events: RedisEvents
    private let watch: RedisFailoverWatch
    private let lock = NSLock()
    /// Serializes the first discovery, which runs on the first caller's thread.
    private let firstDiscovery = NSLock()
    private let queue = DispatchQueue(label: "OperationDownloader.Redis.sentinel")
    private var primary: RedisConnectionPool?
    private var pools: [RedisNodeAddress: RedisConnectionPool] = [:]
    /// The Sentinel that answered last is asked first.
    private var order: [RedisNodeAddress]
    private var discoveredOnce = false
    private var discovering = false
    private var lastDemand: UInt64 = 0
    private var lastProblem = "no Sentinel asked yet"

    init(sentinels: [RedisNodeAddress], primaryName: String, deployment: RedisDeployment, settings: RedisClientSettings,
         events: RedisEvents, failoverWindow: TimeInterval) {
        self.sentinels = sentinels
        self.primaryName = primaryName
        self.deployment = deployment
        self.settings = settings
        self.events = events
        self.order = sentinels
        watch = RedisFailoverWatch(window: failoverWindow)
    }

    func run(_ requests: [RedisRequest]) -> [Result<RedisReply, RedisUnavailable>] {
        guard let pool = currentPrimary() else {
            let problem = lock.withLock { lastProblem }
            let reason = watch.isFailingOver ? RedisUnavailable.failingOver(problem) : .down(problem)
            return Array(repeating: .failure(reason), count: requests.count)
        }
        switch pool.pipeline(requests.map(\.arguments), limits: requests.map(\.limits)) {
        case .failure(let failure):
            primaryLost(pool, failure.reason)
            return Array(repeating: .failure(watch.unavailable(pool.address, failure.reason)), count: requests.count)
        case .success(let replies):
            guard replies.contains(where: { $0.errorCode == "READONLY" }) else {
                if watch.isLost(pool.address) { watch.recovered(pool.address) }
                return replies.map { .success($0) }
            }
            let reason = "\(pool.address) answers READONLY: it is a replica now"
            pool.failed(RedisConnectionFailure(.notPrimary, reason))
            primaryLost(pool, reason)
            return replies.map { $0.errorCode == "READONLY" ? .failure(watch.unavailable(pool.address, reason)) : .success($0) }
        }
    }

    func waitForFailover(until deadline: RedisDeadline) {
        watch.wait(until: deadline)
    }

    func primaries() -> Result<[RedisConnectionPool], RedisUnavailable> {
        guard let pool = currentPrimary() else { return .failure(.down(lock.withLock { lastProblem })) }
        return .success([pool])
    }

    // MARK: Finding the primary

    /// The primary's pool; the first call asks the Sentinels on its own thread, later ones never wait for them.
    private func currentPrimary() -> RedisConnectionPool? {
        let (known, asked): (RedisConnectionPool?, Bool) = lock.withLock {
            lastDemand = RedisDeadline.now
            return (primary, discoveredOnce)
        }
        if let known { return known }
        if asked {
            startDiscovery()
            return nil
        }
        firstDiscovery.withLock {
            guard !lock.withLock({ discoveredOnce }) else { return }
            let found = discoverOnce()
            lock.withLock { discoveredOnce = true }
            if !found { startDiscovery() }
        }
        return lock.withLock { primary }
    }

    /// The primary failed (unreachable, timed out, demoted): the Sentinels are asked again, in the background.
    private func primaryLost(_ pool: RedisConnectionPool, _ reason: String) {
        if watch.lost(pool.address) {
            lock.withLock { lastProblem = "the primary \(pool.address) failed (\(reason)); asking the Sentinels for the new one" }
        }
        startDiscovery()
    }

    private func startDiscovery() {
        let start = lock.withLock {
            defer { discovering = true }
            return !discovering
        }
        if start { queue.async { [self] in discoverUntilFound() } }
    }

    /// Asks the Sentinels until a primary answers: every 100 ms during a failover, then with the breaker's
    /// back-off, while requests want the primary.
    private func discoverUntilFound() {
        var interval = settings.retryInterval
        // Bounded: each turn asks once and sleeps; the loop ends once a primary answers or nobody wants one.
        while true {
            if discoverOnce() { break }
            let wanted = lock.withLock { RedisDeadline.now < lastDemand + RedisDeadline.nanoseconds(settings.probeWhileWantedFor) }
            guard wanted else { break }
            if watch.isFailingOver {
                Thread.sleep(forTimeInterval: 0.1)
            } else {
                Thread.sleep(forTimeInterval: interval)
                interval = min(settings.maximumRetryInterval, interval * 2)
            }
        }
        lock.withLock { discovering = false }
    }

    /// One round: the Sentinels' answer, and the node it names answering as a primary. True when it does.
    private func discoverOnce() -> Bool {
        guard let address = askSentinels() else { return false }
        let (pool, previous): (RedisConnectionPool, RedisConnectionPool?) = lock.withLock {
            let pool = pools[address] ?? RedisConnectionPool(endpoint: deployment.endpoint(address), role: .primary, settings: settings, events: events)
            pools[address] = pool
            if pools.count > 8 {
                for stale in pools.keys where stale != address && stale != primary?.address { pools.removeValue(forKey: stale) }
            }
            return (pool, primary)
        }
        // Any reply will do (an ACL user may lack PING): a new connection has checked ROLE.
        guard pool.isAvailable, case .success = pool.pipeline([RedisCommand.make("PING")]) else {
            lock.withLock { lastProblem = "the Sentinels name \(address) as the primary of \(primaryName), which does not answer as one" }
            return false
        }
        lock.withLock { primary = pool }
        watch.recoveredAll()
        events.resolved("sentinels")
        if let previous, previous.address != address {
            events.warn("HTTPImageCache: Redis Sentinel: the primary of \(primaryName) is now \(address) (was \(previous.address))")
        }
        return true
    }

    /// The primary's address from the first Sentinel that knows it, or nil (the reason in `lastProblem`).
    private func askSentinels() -> RedisNodeAddress? {
        var problems: [String] = []
        for sentinel in lock.withLock({ order }) {
            do throws(RedisConnectionFailure) {
                let connection = try RedisConnection(endpoint: deployment.endpoint(sentinel), connectTimeout: settings.connectTimeout,
                                                     commandTimeout: settings.commandTimeout, role: .sentinel)
                let reply = try connection.command(RedisCommand.make("SENTINEL", "get-master-addr-by-name", primaryName))
                guard let parts = reply.elements, parts.count == 2, let host = parts[0].text, !host.isEmpty,
                      let port = parts[1].text.flatMap({ Int($0) }), (1...65535).contains(port) else {
                    let answer = reply.errorMessage ?? (reply == .null ? "no primary named \(primaryName)" : "an unexpected answer")
                    problems.append("\(sentinel): \(answer)")
                    events.error(reply.errorCode.map { $0.lowercased() } ?? "sentinel", node: sentinel)
                    continue
                }
                lock.withLock { order = [sentinel] + order.filter { $0 != sentinel } }
                return RedisNodeAddress(host: host, port: port)
            } catch {
                events.error(error.kind.rawValue, node: sentinel)
                problems.append(error.reason)
            }
        }
        let problem = "no Sentinel named the primary of \(primaryName): " + problems.joined(separator: "; ")
        lock.withLock { lastProblem = problem }
        events.warn("HTTPImageCache: Redis \(deployment.displayName) is unavailable (\(problem)); downloads go to the origin without it",
                    once: "sentinels", metadata: ["redis.endpoint": deployment.displayName, "error": problem])
        return nil
    }
}

import Foundation

/// How a deployment routes commands: one server, a Sentinel's primary, or a Cluster's slots.
protocol RedisTopology: AnyObject, Sendable {
    /// Runs `requests` (each on its node; in order per node, pipelined): a reply or why not, for each.
    func run(_ requests: [RedisRequest]) -> [Result<RedisReply, RedisUnavailable>]
    /// Returns once no failover is under way (a new primary answers, or its window has passed), or at `deadline`.
    func waitForFailover(until deadline: RedisDeadline)
    /// The pools of every primary (a scan of all keys visits each).
    func primaries() -> Result<[RedisConnectionPool], RedisUnavailable>
}

/// The package's own Redis client (no hiredis: Docs/Scaling.md says why): one per cache, over the deployment
/// its URL names — a server, a Sentinel-managed primary, or a Cluster. Every call is bounded in time (connect,
/// one deadline per pipeline) and in size (each request's `RESPLimits`); every node has its own pool and
/// circuit breaker (`RedisConnectionPool`); every event goes through `events` (warnings, counts).
final class RedisClient: Sendable {
    let deployment: RedisDeployment
    let events: RedisEvents
    let settings: RedisClientSettings
    private let topology: any RedisTopology

    init(deployment: RedisDeployment, options: RedisCacheOptions, events: RedisEvents = RedisEvents()) {
        self.deployment = deployment
        self.events = events
        let settings = RedisClientSettings(options)
        self.settings = settings
        // A failover is worth waiting for as long as a lock lives: a holder's lock outlives it when it is short.
        let window = max(0.1, options.lockTimeout)
        switch deployment.topology {
        case .standalone(let address):
            topology = RedisStandaloneTopology(
                pool: RedisConnectionPool(endpoint: deployment.endpoint(address), role: .any, settings: settings, events: events))
        case .sentinel(let sentinels, let name):
            topology = RedisSentinelTopology(sentinels: sentinels, primaryName: name, deployment: deployment, settings: settings,
                                             events: events, failoverWindow: window)
        case .cluster(let seeds):
            topology = RedisClusterTopology(seeds: seeds, deployment: deployment, settings: settings, events: events,
                                            failoverWindow: window)
        }
    }

    var displayName: String { deployment.displayName }

    /// Runs `requests` as pipelines (one per node): a reply, or why none, for each, in order.
    func pipeline(_ requests: [RedisRequest]) -> [Result<RedisReply, RedisUnavailable>] {
        guard !requests.isEmpty else { return [] }
        return topology.run(requests)
    }

    func command(_ request: RedisRequest) -> Result<RedisReply, RedisUnavailable> {
        pipeline([request])[0]
    }

    /// `pipeline`, and the requests that met a failover run again once it ends — waiting no later than `deadline`.
    /// For writes the caller does not wait for (an entry's `SET`, a lock's release): they then land on the new
    /// primary instead of being lost.
    func pipelineAcrossFailover(_ requests: [RedisRequest], until deadline: RedisDeadline) -> [Result<RedisReply, RedisUnavailable>] {
        var results = pipeline(requests)
        // Bounded: each turn waits for the failover's end or the deadline, and the loop stops at the deadline.
        for _ in 0..<4 {
            let again = results.indices.filter { (try? results[$0].get()) == nil && results[$0].failureValue?.isFailingOver == true }
            guard !again.isEmpty, !deadline.hasPassed else { break }
            topology.waitForFailover(until: deadline)
            let retried = pipeline(again.map { requests[$0] })
            for (index, result) in zip(again, retried) { results[index] = result }
        }
        return results
    }

    /// Calls `body` with the keys matching `pattern`, a batch at a time, on every primary (SCAN, bounded); false
    /// when a node could not be scanned to the end.
    @discardableResult
    func forEachKey(matching pattern: Data, _ body: ([Data]) -> Void) -> Bool {
        guard case .success(let pools) = topology.primaries() else { return false }
        var complete = true
        for pool in pools {
            var cursor = Data("0".utf8)
            var finished = false
            for _ in 0..<100_000 {
                guard case .success(let replies) = pool.pipeline([RedisCommand.make("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)]),
                      let parts = replies.first?.elements, parts.count == 2, let next = parts[0].data,
                      let found = parts[1].elements else { break }
                let keys = found.compactMap(\.data)
                if !keys.isEmpty { body(keys) }
                cursor = next
                if cursor == Data("0".utf8) {
                    finished = true
                    break
                }
            }
            complete = complete && finished
        }
        return complete
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

/// One server: one pool.
final class RedisStandaloneTopology: RedisTopology {
    let pool: RedisConnectionPool

    init(pool: RedisConnectionPool) {
        self.pool = pool
    }

    func run(_ requests: [RedisRequest]) -> [Result<RedisReply, RedisUnavailable>] {
        switch pool.pipeline(requests.map(\.arguments), limits: requests.map(\.limits)) {
        case .success(let replies): return replies.map { .success($0) }
        case .failure(let failure): return Array(repeating: .failure(.down(failure.reason)), count: requests.count)
        }
    }

    func waitForFailover(until deadline: RedisDeadline) {}

    func primaries() -> Result<[RedisConnectionPool], RedisUnavailable> { .success([pool]) }
}

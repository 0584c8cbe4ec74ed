import Foundation

/// A Redis Cluster (`redis-cluster://host:port[,host:port…]`): each request goes to the node that serves its
/// key's hash slot (`RedisClusterSlotMap`, read with `CLUSTER SLOTS` from any node that answers), with one
/// pool and breaker per node, so a dead node costs only its own slots. `MOVED` patches the map and asks for a
/// fresh one; `ASK` (a slot being migrated) sends that one command, after `ASKING`, to the node named. A node
/// that stops answering is "failing over" (`RedisFailoverWatch`) while the map is read again every 100 ms,
/// until another node serves its slots (its replica was promoted) or the window ends.
final class RedisClusterTopology: RedisTopology, @unchecked Sendable {  // the `var`s guarded by `lock`
    /// Redirections followed for one request (MOVED then ASK, say) before giving up on it.
    static let maximumRedirections = 4

    private let seeds: [RedisNodeAddress]
    private let deployment: RedisDeployment
    private let settings: RedisClientSettings
    private let events: RedisEvents
    private let watch: RedisFailoverWatch
    private let lock = NSLock()
    private let firstRefresh = NSLock()
    private let queue = DispatchQueue(label: "OperationDownloader.Redis.cluster")
    private var map: RedisClusterSlotMap?
    private var pools: [RedisNodeAddress: RedisConnectionPool] = [:]
    private var refreshedOnce = false
    private var refreshing = false
    private var refreshAgain = false
    private var lastDemand: UInt64 = 0
    private var lastProblem = "the slot map was not read yet"

    init(seeds: [RedisNodeAddress], deployment: RedisDeployment, settings: RedisClientSettings, events: RedisEvents,
         failoverWindow: TimeInterval) {
        self.seeds = seeds
        self.deployment = deployment
        self.settings = settings
        self.events = events
        watch = RedisFailoverWatch(window: failoverWindow)
    }

    /// Where one request goes next.
    private struct Pending {
        let index: Int
        var redirections = 0
        /// Set after ASK: that node, once, after ASKING.
        var askTarget: RedisNodeAddress?
    }

    func run(_ requests: [RedisRequest]) -> [Result<RedisReply, RedisUnavailable>] {
        var results = [Result<RedisReply, RedisUnavailable>?](repeating: nil, count: requests.count)
        guard let initial = currentMap() else {
            let problem = lock.withLock { lastProblem }
            return Array(repeating: .failure(.down(problem)), count: requests.count)
        }
        var map = initial
        var pending = requests.indices.map { Pending(index: $0) }
        // Bounded: each round either answers a request or counts one more redirection of it.
        while !pending.isEmpty {
            var byNode: [RedisNodeAddress: [Pending]] = [:]
            var order: [RedisNodeAddress] = []
            for item in pending {
                let slot = requests[item.index].key.map(RedisClusterSlotMap.slot(of:))
                guard let node = item.askTarget ?? (slot.flatMap { map.node(for: $0) } ?? map.primaries.first) else {
                    results[item.index] = .failure(.down("hash slot \(slot ?? -1) is served by no node of the Cluster"))
                    continue
                }
                if byNode[node] == nil { order.append(node) }
                byNode[node, default: []].append(item)
            }
            pending = []
            for node in order {
                guard let items = byNode[node] else { continue }
                pending += send(items, to: node, requests: requests, results: &results)
            }
            pending = pending.filter { item in
                guard item.redirections <= Self.maximumRedirections else {
                    results[item.index] = .failure(.down("more than \(Self.maximumRedirections) redirections"))
                    return false
                }
                return true
            }
            if !pending.isEmpty, let latest = lock.withLock({ self.map }) { map = latest }
        }
        return results.map { $0 ?? .failure(.down("no answer")) }
    }

    /// Sends `items` to `node` in one pipeline; records their results and returns the redirected ones.
    private func send(_ items: [Pending], to node: RedisNodeAddress, requests: [RedisRequest],
                      results: inout [Result<RedisReply, RedisUnavailable>?]) -> [Pending] {
        var commands: [[Data]] = []
        var limits: [RESPLimits] = []
        for item in items {
            if item.askTarget != nil {
                commands.append(RedisCommand.make("ASKING"))
                limits.append(.standard)
            }
            commands.append(requests[item.index].arguments)
            limits.append(requests[item.index].limits)
        }
        let pool = self.pool(node)
        guard case .success(let replies) = pool.pipeline(commands, limits: limits) else {
            let reason = "the Cluster node \(node) does not answer"
            if watch.lost(node) { lock.withLock { lastProblem = reason } }
            startRefresh()
            for item in items { results[item.index] = .failure(watch.unavailable(node, reason)) }
            return []
        }
        if watch.isLost(node) { watch.recovered(node) }
        var redirected: [Pending] = []
        var cursor = 0
        for var item in items {
            if item.askTarget != nil { cursor += 1 }  // ASKING's +OK
            let reply = replies[cursor]
            cursor += 1
            switch RedisRedirection(reply, from: node) {
            case .moved(let slot, let target)?:
                lock.withLock { map?.assign(slot, to: target) }
                startRefresh()
                item.askTarget = nil
                item.redirections += 1
                redirected.append(item)
            case .ask(_, let target)?:
                item.askTarget = target
                item.redirections += 1
                redirected.append(item)
            case nil:
                if let code = reply.errorCode, code == "CLUSTERDOWN" || code == "TRYAGAIN" {
                    watch.lost(node)
                    startRefresh()
                    results[item.index] = .failure(watch.unavailable(node, reply.errorMessage ?? String(code)))
                } else {
                    results[item.index] = .success(reply)
                }
            }
        }
        return redirected
    }

    func waitForFailover(until deadline: RedisDeadline) {
        watch.wait(until: deadline)
    }

    func primaries() -> Result<[RedisConnectionPool], RedisUnavailable> {
        guard let map = currentMap() else { return .failure(.down(lock.withLock { lastProblem })) }
        return .success(map.primaries.map(pool))
    }

    // MARK: The slot map

    private func pool(_ node: RedisNodeAddress) -> RedisConnectionPool {
        lock.withLock {
            if let pool = pools[node] { return pool }
            let pool = RedisConnectionPool(endpoint: deployment.endpoint(node), role: .any, settings: settings, events: events)
            pools[node] = pool
            return pool
        }
    }

    /// The map; the first call reads it on its own thread, later ones never wait for a refresh.
    private func currentMap() -> RedisClusterSlotMap? {
        let (known, asked): (RedisClusterSlotMap?, Bool) = lock.withLock {
            lastDemand = RedisDeadline.now
            return (map, refreshedOnce)
        }
        if let known { return known }
        if asked {
            startRefresh()
            return nil
        }
        firstRefresh.withLock {
            guard !lock.withLock({ refreshedOnce }) else { return }
            let read = refreshOnce()
            lock.withLock { refreshedOnce = true }
            if !read { startRefresh() }
        }
        return lock.withLock { map }
    }

    /// Reads the map again in the background (once, or every 100 ms while a failover is under way).
    private func startRefresh() {
        let start = lock.withLock {
            if refreshing { refreshAgain = true }
            defer { refreshing = true }
            return !refreshing
        }
        if start { queue.async { [self] in refreshUntilSettled() } }
    }

    private func refreshUntilSettled() {
        var interval = settings.retryInterval
        // Bounded: each turn reads once and sleeps; it ends once the map is read and no failover is under way, or
        // when nobody wants the Cluster any more.
        while true {
            let read = refreshOnce()
            let (again, wanted): (Bool, Bool) = lock.withLock {
                defer { refreshAgain = false }
                return (refreshAgain, RedisDeadline.now < lastDemand + RedisDeadline.nanoseconds(settings.probeWhileWantedFor))
            }
            if read && !watch.isFailingOver && !again { break }
            guard wanted else { break }
            if watch.isFailingOver || (read && again) {
                Thread.sleep(forTimeInterval: 0.1)
            } else {
                Thread.sleep(forTimeInterval: interval)
                interval = min(settings.maximumRetryInterval, interval * 2)
            }
        }
        lock.withLock { refreshing = false }
    }

    /// Asks the known primaries, then the seeds, for `CLUSTER SLOTS`; true when one answered with a map.
    private func refreshOnce() -> Bool {
        let known = lock.withLock { map?.primaries ?? [] }
        var candidates = known.filter { !watch.isLost($0) }
        for seed in seeds where !candidates.contains(seed) { candidates.append(seed) }
        var problems: [String] = []
        for node in candidates {
            let pool = self.pool(node)
            guard pool.isAvailable || !known.contains(node) else { continue }
            switch pool.pipeline([RedisCommand.make("CLUSTER", "SLOTS")], limits: [RESPLimits.standard]) {
            case .success(let replies):
                guard let read = RedisClusterSlotMap(clusterSlots: replies[0], askedNode: node) else {
                    problems.append("\(node): \(replies[0].errorMessage ?? "not a slot map")")
                    continue
                }
                install(read)
                return true
            case .failure(let failure):
                problems.append(failure.reason)
            }
        }
        let problem = "no Cluster node gave its slot map: " + problems.joined(separator: "; ")
        lock.withLock { lastProblem = problem }
        events.warn("HTTPImageCache: Redis \(deployment.displayName) is unavailable (\(problem)); downloads go to the origin without it",
                    once: "cluster", metadata: ["redis.endpoint": deployment.displayName, "error": problem])
        return false
    }

    private func install(_ read: RedisClusterSlotMap) {
        let serving = Set(read.primaries)
        lock.withLock {
            map = read
            // Pools of nodes that serve nothing any more go (their connections close once unused).
            for node in pools.keys where !serving.contains(node) && !seeds.contains(node) { pools.removeValue(forKey: node) }
        }
        events.resolved("cluster")
        // A lost node whose slots another node serves now: its failover is over.
        for node in read.nodes where !serving.contains(node) { watch.recovered(node) }
        if !read.primaries.contains(where: watch.isLost) { watch.recoveredAll() }
    }
}

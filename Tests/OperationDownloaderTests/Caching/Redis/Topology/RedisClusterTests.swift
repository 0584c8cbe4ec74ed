import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// `redis-cluster://` on a real Cluster the tests make (three primaries with a replica each, every node with a
/// password): keys go to their slot's node, an entry and its lock share a slot, a dead primary's replica is
/// followed once promoted (single-flight kept meanwhile), and a slot migrated mid-run is followed through ASK
/// and MOVED.
@Suite(.requires(.redisServer, .redisCLI)) struct RedisClusterTests {
    typealias F = HTTPCacheFixtures
    let server = FixtureServer.shared

    func options(lockTimeout: TimeInterval = 3) -> RedisCacheOptions {
        var options = RedisCacheFixtures.options()
        options.lockTimeout = lockTimeout
        options.maximumWait = 600
        return options
    }

    func urls(_ count: Int, tag: String, delay: Int) -> [URL] {
        (0..<count).map { server.url("/images/image.png?cc=max-age%3D600&delay_ms=\(delay)&n=\($0)&tag=\(tag)") }
    }

    func store(_ cache: HTTPImageCache, _ url: String, _ body: Data) throws {
        let response = try F.response(url, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600"]))
        cache.store(response, data: body, for: F.request(url), requestDate: Date(), responseDate: Date())
    }

    @Test func eachKeyLivesOnItsSlotsNode() async throws {
        let cluster = try await RedisClusterDeployment.start(password: "s3cret")
        defer { cluster.stop() }
        let warnings = WarningLog()
        let writer = try HTTPImageCache(redis: cluster.url(), options: options())
        writer.warningHandler = { warnings.append($0) }
        let urls = (0..<30).map { "http://images.test/cluster-\($0).png" }
        for (index, url) in urls.enumerated() { try store(writer, url, F.body(index, count: 200)) }
        let reader = try HTTPImageCache(redis: cluster.url(), options: options())
        for (index, url) in urls.enumerated() {
            #expect(reader.cachedResponse(for: F.request(url))?.data == F.body(index, count: 200))
            let key = RedisCacheFixtures.entryKey(for: F.url(url))
            let owner = try #require(cluster.owner(of: key))
            #expect(try cluster.probe(owner).get(key) != nil, "\(key) is not on its slot's node")
        }
        // The 30 keys spread over the three primaries.
        let primaries = Set(urls.compactMap { cluster.owner(of: RedisCacheFixtures.entryKey(for: F.url($0)))?.port })
        #expect(primaries.count == 3)
        // removeAll scans every primary.
        reader.removeAll()
        for node in cluster.nodes {
            let left = (try? cluster.probe(node).command("DBSIZE")) ?? .integer(-1)
            #expect(left == .integer(0), "\(node.port) keeps \(left)")
        }
        #expect(warnings.all.isEmpty, "\(warnings.all)")
    }

    /// A primary killed while four "processes" download the same URLs: its slots are failing over until the
    /// Cluster promotes its replica (the other nodes serve on: one breaker per node); no download fails and the
    /// origin sees each URL about once.
    @Test func aKilledPrimarysReplicaIsFollowed() async throws {
        let cluster = try await RedisClusterDeployment.start(password: "s3cret")
        defer { cluster.stop() }
        let lockTimeout: TimeInterval = 8
        let warnings = WarningLog()
        let fleet = RedisFleetRun(redis: cluster.url(), options: options(lockTimeout: lockTimeout), warnings: warnings)
        let (before, during, elsewhere) = (newTag(), newTag(), newTag())
        let first = try #require(try await fleet.run(urls(40, tag: before, delay: 40), tag: before))
        // 60 URLs whose slots the victim serves (in flight when it dies), 20 on the other primaries.
        let map = try #require(cluster.slotMap())
        func port(_ url: URL) -> Int? { map.node(for: RedisClusterSlotMap.slot(of: Data(RedisCacheFixtures.entryKey(for: url).utf8)))?.port }
        let victimPort = try #require(port(urls(1, tag: during, delay: 200)[0]))
        let victim = try #require(cluster.nodes.first { $0.port == victimPort })
        let onVictim = urls(600, tag: during, delay: 200).filter { port($0) == victimPort }.prefix(60)
        let others = urls(100, tag: elsewhere, delay: 200).filter { port($0) != victimPort }.prefix(20)
        let lastOnVictim = try #require(onVictim.last)
        #expect(onVictim.count == 60 && others.count == 20)
        let second = try #require(try await fleet.run(Array(onVictim) + Array(others), tag: during, whenOriginHas: 8) { victim.stop() },
                                  "the fleet hung: \(warnings.all)")
        #expect(first.failed == 0 && second.failed == 0)
        let requests = [before, during, elsewhere].map { server.stats(tag: $0).count }.reduce(0, +)
        #expect(requests >= 120 && Double(requests) <= 1.05 * 120, "\(requests) origin requests for 120 URLs; \(warnings.all)")
        #expect(second.longestWait <= lockTimeout + 1, "a wait lasted \(second.longestWait) s")
        // The other primaries served on meanwhile (one breaker per node): their URLs reached the origin once each.
        #expect(server.stats(tag: elsewhere).count == 20)
        // A replica serves the victim's slots now, and an entry stored during the failover is there.
        let owner = try #require(cluster.owner(of: RedisCacheFixtures.entryKey(for: lastOnVictim)))
        #expect(owner.port != victim.port)
        let reader = try HTTPImageCache(redis: cluster.url(), options: options())
        #expect(reader.cachedResponse(for: URLRequest(url: lastOnVictim)) != nil)
    }

    /// A slot being migrated: a key not yet on the source is asked of the target (ASK, then ASKING); once the slot
    /// has moved, the source answers MOVED and the cache remaps it. Entries and locks follow their slot.
    @Test func aMigratingSlotIsFollowed() async throws {
        let cluster = try await RedisClusterDeployment.start(password: "s3cret")
        defer { cluster.stop() }
        let warnings = WarningLog()
        let cache = try HTTPImageCache(redis: cluster.url(), options: options())
        cache.warningHandler = { warnings.append($0) }
        let before = "http://images.test/migrating-before.png"
        // A URL whose slot moves: entries stored before and during the migration, read throughout.
        let key = RedisCacheFixtures.entryKey(for: F.url(before))
        let slot = RedisClusterSlotMap.slot(of: Data(key.utf8))
        let source = try #require(cluster.owner(of: key))
        let primaries = Set(cluster.nodes.compactMap { node in
            (try? cluster.probe(node).command("ROLE").elements?.first?.text) == "master" ? node.port : nil
        })
        let target = try #require(cluster.nodes.first { $0.port != source.port && primaries.contains($0.port) })
        try store(cache, before, F.body(1, count: 100))
        #expect(try cluster.probe(source).get(key) != nil)
        let (sourceID, targetID) = (try cluster.id(of: source), try cluster.id(of: target))
        #expect(try cluster.probe(target).command("CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID) == .status("OK"))
        #expect(try cluster.probe(source).command("CLUSTER", "SETSLOT", slot, "MIGRATING", targetID) == .status("OK"))
        // Same slot (the hash tag), not yet on either node: the source sends the write to the target (ASK).
        let during = try sameSlotURL(as: key, excluding: before)
        try store(cache, during, F.body(2, count: 100))
        #expect(try cluster.probe(target).command("CLUSTER", "COUNTKEYSINSLOT", slot) == .integer(1))
        // Both read back through the migration: one from the source, one from the target after ASK.
        let reader = try HTTPImageCache(redis: cluster.url(), options: options())
        #expect(reader.cachedResponse(for: F.request(before))?.data == F.body(1, count: 100))
        #expect(reader.cachedResponse(for: F.request(during))?.data == F.body(2, count: 100))
        // The rest of the slot moves; the slot is the target's.
        _ = try cluster.probe(source).command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "AUTH", "s3cret", "KEYS", key)
        for node in cluster.nodes where primaries.contains(node.port) {
            _ = try cluster.probe(node).command("CLUSTER", "SETSLOT", slot, "NODE", targetID)
        }
        // The reader's map still names the source, which answers MOVED: remapped, served.
        #expect(reader.cachedResponse(for: F.request(before))?.data == F.body(1, count: 100))
        try store(reader, before, F.body(3, count: 100))
        #expect(try cluster.probe(target).command("CLUSTER", "COUNTKEYSINSLOT", slot) == .integer(2))
        #expect(warnings.all.isEmpty, "\(warnings.all)")
    }

    /// Another image URL whose entry key falls in `key`'s slot (found by trying query strings).
    func sameSlotURL(as key: String, excluding: String) throws -> String {
        let slot = RedisClusterSlotMap.slot(of: Data(key.utf8))
        for attempt in 0..<2_000_000 {
            let candidate = "http://images.test/migrating.png?n=\(attempt)"
            if candidate != excluding, RedisClusterSlotMap.slot(of: Data(RedisCacheFixtures.entryKey(for: F.url(candidate)).utf8)) == slot {
                return candidate
            }
        }
        throw RedisServerFailure(message: "no URL found in slot \(slot)")
    }
}

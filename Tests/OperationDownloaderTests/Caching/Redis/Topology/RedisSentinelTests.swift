import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// `redis-sentinel://` on a real deployment the tests start (a primary, a replica, three Sentinels; every node
/// and Sentinel with a password): the primary is found through the Sentinels, a failover is followed with
/// single-flight kept, a demoted primary is never written to.
@Suite(.requires(.redisServer)) struct RedisSentinelTests {
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

    @Test func findsThePrimaryThroughTheSentinels() async throws {
        let deployment = try await RedisSentinelDeployment.start(password: "s3cret")
        defer { deployment.stop() }
        let url = "http://images.test/sentinel.png"
        let warnings = WarningLog()
        let writer = try HTTPImageCache(redis: deployment.url(), options: options())
        writer.warningHandler = { warnings.append($0) }
        let response = try F.response(url, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600"]))
        writer.store(response, data: F.body(1, count: 100), for: F.request(url), requestDate: Date(), responseDate: Date())
        let reader = try HTTPImageCache(redis: deployment.url(), options: options())
        #expect(reader.cachedResponse(for: F.request(url))?.data == F.body(1, count: 100))
        // Written to the primary (the replica has it only by replication).
        #expect(try RedisProbe(deployment.primary, password: "s3cret").keys("od:v2:*") == [RedisCacheFixtures.entryKey(for: F.url(url))])
        #expect(warnings.all.isEmpty, "\(warnings.all)")
    }

    /// The primary killed while four "processes" download the same URLs: the Sentinels promote the replica, the
    /// caches follow it; single-flight holds across the failover (the waits meanwhile last at most the lock's
    /// lifetime), no download fails, and the origin sees each URL about once.
    @Test func followsAFailoverWithSingleFlightKept() async throws {
        let deployment = try await RedisSentinelDeployment.start(password: "s3cret")
        defer { deployment.stop() }
        let lockTimeout: TimeInterval = 8
        let warnings = WarningLog()
        let fleet = RedisFleetRun(redis: deployment.url(), options: options(lockTimeout: lockTimeout), warnings: warnings)
        // 40 URLs with the primary alive, then 80 more (slower at the origin: in flight when it dies) with the
        // primary killed once 8 of them have reached the origin.
        let (before, during) = (newTag(), newTag())
        let first = try #require(try await fleet.run(urls(40, tag: before, delay: 40), tag: before))
        let second = try #require(try await fleet.run(urls(80, tag: during, delay: 200), tag: during, whenOriginHas: 8) { deployment.primary.stop() },
                                  "the fleet hung: \(warnings.all)")
        #expect(first.failed == 0 && second.failed == 0)
        let requests = server.stats(tag: before).count + server.stats(tag: during).count
        #expect(requests >= 120 && Double(requests) <= 1.05 * 120, "\(requests) origin requests for 120 URLs; \(warnings.all)")
        #expect(second.longestWait <= lockTimeout + 1, "a wait lasted \(second.longestWait) s")
        // The replica is the primary now, and the caches wrote there.
        #expect(deployment.primaryPort() == deployment.replica.port)
        #expect(try RedisProbe(deployment.replica, password: "s3cret").keys("od:v2:*").count >= 80)
        #expect(warnings.all.contains { $0.contains("primary of \(RedisSentinelDeployment.primaryName) is now 127.0.0.1:\(deployment.replica.port)") },
                "\(warnings.all)")
    }

    /// The primary and its replica both die: no failover can come. The downloads wait for one no longer than the
    /// lock's lifetime, then go to the origin; none fails.
    @Test func aFailoverThatNeverComesCostsOneLockLifetime() async throws {
        let deployment = try await RedisSentinelDeployment.start(password: "s3cret")
        defer { deployment.stop() }
        let lockTimeout: TimeInterval = 2
        let warnings = WarningLog()
        let fleet = RedisFleetRun(redis: deployment.url(), options: options(lockTimeout: lockTimeout), members: 2, warnings: warnings)
        let (before, during) = (newTag(), newTag())
        _ = try #require(try await fleet.run(urls(10, tag: before, delay: 40), tag: before))
        let outcome = try #require(try await fleet.run(urls(20, tag: during, delay: 200), tag: during, bound: 60, whenOriginHas: 2) {
            deployment.primary.stop()
            deployment.replica.stop()
        }, "the fleet hung: \(warnings.all)")
        #expect(outcome.failed == 0)
        #expect(outcome.flights.contains { $0.longestWait > 0 } && outcome.longestWait <= lockTimeout + 1,
                "the longest wait lasted \(outcome.longestWait) s")
    }

    /// A failover without a death (`SENTINEL FAILOVER`): the old primary, now a replica, answers the cache's
    /// pooled connections with READONLY; the cache asks the Sentinels again and writes to the new primary,
    /// never to the replica, and without a "refuses writes" warning.
    @Test func aDemotedPrimaryIsNeverWrittenTo() async throws {
        let deployment = try await RedisSentinelDeployment.start(password: "s3cret")
        defer { deployment.stop() }
        let warnings = WarningLog()
        let cache = try HTTPImageCache(redis: deployment.url(), options: options())
        cache.warningHandler = { warnings.append($0) }
        func store(_ index: Int) throws {
            let url = "http://images.test/demoted-\(index).png"
            let response = try F.response(url, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600"]))
            cache.store(response, data: F.body(index, count: 100), for: F.request(url), requestDate: Date(), responseDate: Date())
        }
        try store(0)
        let sentinel = RedisProbe(deployment.sentinels[0], password: "s3cret")
        #expect(try sentinel.command("SENTINEL", "FAILOVER", RedisSentinelDeployment.primaryName) == .status("OK"))
        try await waitFor("the failover") {
            deployment.primaryPort() == deployment.replica.port
                && (try? RedisProbe(deployment.primary, password: "s3cret").command("ROLE").elements?.first?.text) == "slave"
        }
        for index in 1...5 { try store(index) }
        let newPrimary = RedisProbe(deployment.replica, password: "s3cret")
        for index in 0...5 {
            #expect(try newPrimary.get(RedisCacheFixtures.entryKey(for: F.url("http://images.test/demoted-\(index).png"))) != nil,
                    "entry \(index) is not on the new primary; \(warnings.all)")
        }
        #expect(!warnings.all.contains { $0.contains("refuses writes") }, "\(warnings.all)")
    }

    /// No Sentinel answers: the cache steps aside at once (one warning), downloads go to the origin.
    @Test func noSentinelAnswers() async throws {
        let ports = try (0..<3).map { _ in try LoopbackPort.free() }
        let warnings = WarningLog()
        let cache = try HTTPImageCache(redis: "redis-sentinel://" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",") + "/mymaster",
                                       options: options())
        cache.warningHandler = { warnings.append($0) }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=max-age%3D600&tag=\(tag)")
        let downloader = makeDownloader { $0.imageCache = nil; $0.httpCache = cache }.0
        let result = try #require(try await within(60) { try await downloader.image(for: url, options: .useURLCache) })
        #expect(result.metrics?.source == .network && server.stats(tag: tag).count == 1)
        #expect(warnings.all.count == 1 && warnings.all[0].contains("no Sentinel named the primary"), "\(warnings.all)")
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// A directory on the machine in front of Redis (`HTTPImageCache(tiers:)`), on a real redis-server: what each hit
/// costs Redis, shared-cache rules in every tier, single-flight through the tiers, and `imagedl` with two
/// `--http-cache` options.
@Suite(.requires(.redisServer)) struct HTTPCacheTierRedisTests {
    typealias F = HTTPCacheFixtures
    let server = FixtureServer.shared

    func tiered(_ directory: TemporaryCacheDirectory, _ redis: RedisServer) throws -> HTTPImageCache {
        try HTTPImageCache(tiers: [HTTPImageCache(directory: directory.url),
                                   HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options())])
    }

    func put(_ cache: HTTPImageCache, _ url: String, headers: [String: String], body: Data, at date: Date = Date()) throws {
        cache.store(try F.response(url, headers: F.headers(date: date, headers)), data: body, for: F.request(url),
                    requestDate: date, responseDate: date)
    }

    /// A hit from Redis is copied into the directory; from then on this machine's processes are served from the
    /// directory without a GET at the server, and a memory hit checks the file (not Redis) for a newer entry.
    @Test func redisHitsFillTheDirectoryAndLaterHitsStayOffTheNetwork() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let directory = TemporaryCacheDirectory(); defer { directory.remove() }
        let url = "http://images.test/tier/a.png"
        try put(HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options()), url,
                headers: ["Cache-Control": "max-age=600"], body: F.body(1, count: 40_000))
        let probe = RedisProbe(redis)

        let first = try tiered(directory, redis)
        #expect(first.cachedResponse(for: F.request(url))?.data == F.body(1, count: 40_000))
        first.waitForQueuedWrites()
        #expect(directory.entryFiles.count == 1)
        let gets = try RedisFleetTests.calls(of: "get", probe)
        let ranges = try RedisFleetTests.calls(of: "getrange", probe)
        for _ in 0..<3 {
            // A new process on this machine each time: no memory layer, then its memory layer.
            let next = try tiered(directory, redis)
            for _ in 0..<2 { #expect(next.cachedResponse(for: F.request(url))?.data == F.body(1, count: 40_000)) }
        }
        #expect(try RedisFleetTests.calls(of: "get", probe) == gets)
        #expect(try RedisFleetTests.calls(of: "getrange", probe) == ranges)
        // Stored through the tiers: both have it, Redis with its TTL.
        let other = "http://images.test/tier/b.png"
        try put(first, other, headers: ["Cache-Control": "max-age=600"], body: F.body(2, count: 100))
        #expect(directory.entryFiles.count == 2)
        #expect(try probe.pttl(RedisCacheFixtures.entryKey(for: F.url(other))) > 500_000)
    }

    /// With a shared tier, the shared-cache rules hold in every tier: a `private` response is stored in none,
    /// and `s-maxage` decides freshness wherever the response sits.
    @Test func sharedRulesApplyInEveryTier() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let directory = TemporaryCacheDirectory(); defer { directory.remove() }
        let cache = try tiered(directory, redis)
        #expect(cache.isShared)
        try put(cache, "http://images.test/tier/private.png", headers: ["Cache-Control": "private, max-age=600"], body: F.body(3, count: 100))
        let keys = try RedisProbe(redis).keys("od:v2:*")
        #expect(directory.entryFiles.isEmpty && keys.isEmpty)
        let url = "http://images.test/tier/s-maxage.png"
        let t0 = Date()
        try put(cache, url, headers: ["Cache-Control": "max-age=600, s-maxage=10"], body: F.body(4, count: 100), at: t0)
        guard case .stale = try tiered(directory, redis).lookup(for: F.request(url), now: t0.addingTimeInterval(60)) else {
            Issue.record("s-maxage should make the entry stale in the directory tier too"); return
        }
    }

    /// Two machines (a directory each, one Redis) revalidate the same stale entry: the one that waited serves the
    /// other's refresh, found in Redis past the stale copy in its own directory, instead of asking again.
    @Test func aWaitingRevalidationFindsTheOtherMachinesRefreshPastItsStaleCopy() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let (dirA, dirB) = (TemporaryCacheDirectory("a"), TemporaryCacheDirectory("b"))
        defer { dirA.remove(); dirB.remove() }
        let url = "http://images.test/tier/revalidated.png"
        let (a, b) = (try tiered(dirA, redis), try tiered(dirB, redis))
        let old = Date().addingTimeInterval(-60)
        try put(b, url, headers: ["Cache-Control": "max-age=10", "ETag": "\"v1\""], body: F.body(5, count: 100), at: old)
        func transaction(_ cache: HTTPImageCache) -> HTTPCacheTransaction {
            var request = F.request(url)
            request.cachePolicy = .reloadRevalidatingCacheData
            return HTTPCacheTransaction(request: request, cache: cache, useURLCache: true, ignoreCachedResponse: false, handleCookies: false)
        }
        let holder = transaction(a)
        guard case .proceed(.send) = holder.beginSharing(acceptsStatus: { $0 == 200 }) else { Issue.record("A should revalidate"); return }
        let waiter = transaction(b)
        guard case .wait(let wait) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else { Issue.record("B should wait"); return }
        let notModified = try F.response(url, status: 304, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600", "ETag": "\"v1\""]))
        guard case .serveFromCache = holder.received(notModified) else { Issue.record("the 304 did not refresh the entry"); return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiter.whenSharedFetchEnds(wait) { continuation.resume() }
        }
        guard case .proceed(.serveFromCache(let served)) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the waiting revalidation asked again"); return
        }
        #expect(served.data == F.body(5, count: 100) && served.isFresh())
        // The 304 reached every tier of A (its directory and Redis); B's hit in Redis was copied into B's directory.
        a.waitForQueuedWrites(); b.waitForQueuedWrites()
        let storages: [(String, HTTPImageCache)] = [
            ("A's directory", HTTPImageCache(directory: dirA.url)), ("B's directory", HTTPImageCache(directory: dirB.url)),
            ("Redis", try HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options()))]
        for (name, storage) in storages {
            guard case .fresh(let stored) = storage.lookup(for: F.request(url)) else { Issue.record("\(name) does not hold the refresh"); continue }
            #expect(stored.data == F.body(5, count: 100), "\(name)")
        }
    }

    /// Two processes of a machine pair (each a directory of its own, one Redis): four downloads of 20 URLs at
    /// once reach the origin once per URL, as with Redis alone.
    @Test(.requires(.imagedl)) func singleFlightThroughTheTiers() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let directories = (0..<2).map { _ in TemporaryCacheDirectory() }
        defer { for directory in directories { directory.remove() } }
        let tag = newTag()
        let urls = (0..<20).map { server.url("/images/image.png?cc=max-age%3D600&delay_ms=20&n=\($0)&tag=\(tag)").absoluteString }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tiers-\(tag).txt")
        try urls.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let fleet = try (0..<4).map { index in
            try ImagedlProcess(["--http-cache", directories[index % 2].url.path, "--http-cache", redis.url().absoluteString, "--input", file.path])
        }
        var records: [[String: Any]] = []
        for member in fleet {
            let outcome = await member.finish()
            #expect(outcome.status == 0 && outcome.records.count == 20, "\(outcome.standardError)")
            records += outcome.records
        }
        #expect(records.allSatisfy { ($0["status"] as? String) == "ok" })
        #expect(server.stats(tag: tag).count == 20)
        #expect(records.filter { ($0["cache"] as? String) == "hit" }.count == 60)
        // A later run on either machine is served from its directory: the origin sees nothing more.
        let again = try await ImagedlProcess(["--http-cache", directories[1].url.path, "--http-cache", redis.url().absoluteString] + urls).finish()
        #expect(again.records.allSatisfy { ($0["cache"] as? String) == "hit" })
        #expect(server.stats(tag: tag).count == 20)
    }
}

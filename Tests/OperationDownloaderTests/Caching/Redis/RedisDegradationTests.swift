import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// Redis down, slow, full or refusing the password: the cache reads as empty and drops writes, one warning
/// says so, and nothing throws. (Downloads through such a cache: RedisDownloadTests.)
@Suite(.requires(.redisServer)) struct RedisDegradationTests {
    typealias F = HTTPCacheFixtures

    func store(_ cache: HTTPImageCache, _ url: String, _ body: Data) throws {
        let response = try F.response(url, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600"]))
        cache.store(response, data: body, for: F.request(url), requestDate: Date(), responseDate: Date())
    }

    @Test func serverDownIsAMissWithOneWarning() async throws {
        let port = try LoopbackPort.free()  // nothing listens there
        let warnings = WarningLog()
        let cache = try HTTPImageCache(redis: try #require(URL(string: "redis://127.0.0.1:\(port)/0")), options: RedisCacheFixtures.options())
        cache.warningHandler = { warnings.append($0) }
        for index in 0..<5 {
            try store(cache, "http://images.test/\(index).png", F.body(index, count: 10))
            #expect(cache.cachedResponse(for: F.request("http://images.test/\(index).png")) == nil)
        }
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.contains("127.0.0.1:\(port) is unavailable") == true)
    }

    @Test func authRightAndWrong() async throws {
        // alice may run only what Docs/Scaling.md's ACL example grants, on the cache's keys only.
        let server = try await RedisServer.start(arguments: ["--requirepass", "s3cret", "--user", "alice", "on", ">wonderland", "~od:*",
                                                 "+get", "+set", "+del", "+getrange", "+pttl", "+pexpire", "+eval", "+scan", "+select"])
        defer { server.stop() }
        let url = "http://images.test/auth.png"
        // The default user's password, and a restricted ACL user.
        for redisURL in [server.url(password: "s3cret"), server.url(user: "alice", password: "wonderland")] {
            let warnings = WarningLog()
            let cache = try HTTPImageCache(redis: redisURL, options: RedisCacheFixtures.options())
            cache.warningHandler = { warnings.append($0) }
            try store(cache, url, F.body(1, count: 10))
            let reader = try HTTPImageCache(redis: redisURL, options: RedisCacheFixtures.options())
            #expect(reader.cachedResponse(for: F.request(url))?.data == F.body(1, count: 10))
            #expect(warnings.all.isEmpty)
            cache.removeAll()
        }
        // Wrong password, unknown user, no password: refused, one warning each, nothing stored.
        for redisURL in [server.url(password: "wrong"), server.url(user: "mallory", password: "wonderland"), server.url()] {
            let warnings = WarningLog()
            let cache = try HTTPImageCache(redis: redisURL, options: RedisCacheFixtures.options())
            cache.warningHandler = { warnings.append($0) }
            try store(cache, url, F.body(2, count: 10))
            #expect(cache.cachedResponse(for: F.request(url)) == nil)
            #expect(warnings.all.count == 1, "\(warnings.all)")
        }
        #expect(try RedisProbe(server, password: "s3cret").keys("od:*").isEmpty)
    }

    /// A server that stops answering (CLIENT PAUSE: every command waits) costs one command timeout, then the
    /// breaker keeps the cache out of the way until its back-off has passed.
    @Test func slowServerTimesOutAndIsBypassed() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        var options = RedisCacheFixtures.options()
        options.commandTimeout = 0.3
        options.retryInterval = 60
        let url = "http://images.test/slow.png"
        try store(try HTTPImageCache(redis: server.url(), options: options), url, F.body(3, count: 10))
        // In effect once it answers OK; ends by itself (the unpause command would wait as well).
        #expect(try RedisProbe(server).command("CLIENT", "PAUSE", 5000, "ALL") == .status("OK"))
        let warnings = WarningLog()
        let reader = try HTTPImageCache(redis: server.url(), options: options)
        reader.warningHandler = { warnings.append($0) }
        #expect(reader.cachedResponse(for: F.request(url)) == nil)
        #expect(warnings.all.count == 1 && warnings.all.first?.contains("no reply within the command timeout") == true, "\(warnings.all)")
        // Bypassed now: no further warning, no further wait.
        #expect(reader.cachedResponse(for: F.request(url)) == nil)
        #expect(warnings.all.count == 1)
    }

    /// maxmemory with noeviction: writes are refused (OOM), reads still work, one warning.
    @Test func fullServerRefusesWritesWithOneWarning() async throws {
        let server = try await RedisServer.start(arguments: ["--maxmemory", "8mb", "--maxmemory-policy", "noeviction"])
        defer { server.stop() }
        let warnings = WarningLog()
        let cache = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        cache.warningHandler = { warnings.append($0) }
        for index in 0..<6 { try store(cache, "http://images.test/full-\(index).png", F.body(index, count: 1_500_000)) }
        let reader = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        let stored = (0..<6).filter { reader.cachedResponse(for: F.request("http://images.test/full-\($0).png")) != nil }
        #expect(!stored.isEmpty && stored.count < 6, "stored: \(stored)")
        #expect(warnings.all.count == 1 && warnings.all[0].contains("refuses writes") && warnings.all[0].contains("OOM"), "\(warnings.all)")
    }

    /// The server killed while in use, then started again on the same port: misses meanwhile, entries again once
    /// the background probe has found it (no download pays for the probe).
    @Test func recoversAfterTheServerComesBack() async throws {
        let first = try await RedisServer.start()
        let port = first.port
        var options = RedisCacheFixtures.options()
        options.retryInterval = 0.05
        options.maximumRetryInterval = 0.05
        let cache = try HTTPImageCache(redis: first.url(), options: options)
        let warnings = WarningLog()
        cache.warningHandler = { warnings.append($0) }
        try store(cache, "http://images.test/1.png", F.body(1, count: 10))
        first.stop()
        #expect(try HTTPImageCache(redis: first.url(), options: RedisCacheFixtures.options())
            .cachedResponse(for: F.request("http://images.test/1.png")) == nil)
        try store(cache, "http://images.test/2.png", F.body(2, count: 10))
        #expect(warnings.all.count == 1)
        let second = try await RedisServer.start(port: port)
        defer { second.stop() }
        let client = try #require(cache.redisByteStore).client
        #expect(await waitUntil(timeout: 30) { client.events.nodesUnavailable.isEmpty })
        try store(cache, "http://images.test/3.png", F.body(3, count: 10))
        #expect(try RedisProbe(second).keys("od:v2:*") == [RedisCacheFixtures.entryKey(for: F.url("http://images.test/3.png"))])
    }
}

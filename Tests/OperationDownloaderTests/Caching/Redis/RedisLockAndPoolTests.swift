import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// The single-flight lock's renewal and the connection pool, seen from the redis-server: two caches on one
/// server stand for two processes (as in RedisDownloadTests); what they hold and how often they connect is read
/// at the server (the lock's token, `INFO stats`, `CLIENT LIST`).
@Suite(.requires(.redisServer)) struct RedisLockAndPoolTests {
    let server = FixtureServer.shared
    let warnings = WarningLog()

    func downloader(_ redis: RedisServer, options: RedisCacheOptions) throws -> (ImageDownloader, HTTPImageCache) {
        let cache = try HTTPImageCache(redis: redis.url(), options: options)
        cache.warningHandler = { [warnings] in warnings.append($0) }
        let downloader = makeDownloader {
            $0.imageCache = nil
            $0.httpCache = cache
        }.0
        return (downloader, cache)
    }

    /// A holder slower than its lock's lifetime keeps the lock: it renews it while its download runs, so the
    /// waiting process never takes over (one request at the origin) and is served what the holder stored. The
    /// origin holds the holder's request for three lifetimes; the lock keeps the holder's token throughout.
    @Test func aSlowHolderKeepsItsLock() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&tag=\(tag)")
        var options = RedisCacheFixtures.options()
        options.lockTimeout = 2
        options.maximumWait = 600
        let (a, _) = try downloader(redis, options: options)
        let (b, cacheB) = try downloader(redis, options: options)
        let holder = Task { try await a.image(for: url, options: .useURLCache) }
        await server.awaitRequests(tag: tag, count: 1)
        let probe = FleetLockProbe(redis)
        let holderToken = try #require(try probe.lockToken(of: url), "the holder fetches without a lock")
        let waiter = Task { try await b.image(for: url, options: .useURLCache) }
        let flightsB = try #require(cacheB.layer.flights)
        #expect(await waitUntil { flightsB.waitsBegun == 1 }, "warnings: \(warnings.all)")

        // Three lifetimes of the lock, looking at it every 100 ms: it must stay the holder's.
        let end = Date().addingTimeInterval(3 * options.lockTimeout)
        var seen: Data? = holderToken
        while Date() < end && seen == holderToken {
            try await Task.sleep(nanoseconds: 100_000_000)
            seen = try probe.lockToken(of: url)
        }
        #expect(seen == holderToken, """
            the lock changed hands while its holder still fetched: \(seen.map { String(decoding: $0, as: UTF8.self) } ?? "expired")
            """)
        #expect(server.stats(tag: tag).count == 1, "the waiter took the lock over and fetched too")

        server.release(tag)
        let held = try await holder.value
        let waited = try await waiter.value
        #expect(held.metrics?.source == .network)
        #expect(waited.metrics?.source == .httpCache && waited.metrics?.waitedForSharedFetch == true)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// The pool reuses its connections: 24 downloads one after another (each a few commands: the entry, the lock,
    /// the store, the flight's end) open a handful of connections at the server, not one per command, and at most
    /// `maximumIdleConnections` stay open.
    @Test func thePoolReusesItsConnections() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        var options = RedisCacheFixtures.options()
        options.maximumIdleConnections = 2
        let (downloader, _) = try downloader(redis, options: options)
        let probe = FleetLockProbe(redis)
        let commandsBefore = try probe.statistic("total_commands_processed")
        let before = try probe.statistic("total_connections_received")
        for n in 0..<24 {
            _ = try await downloader.image(for: server.url("/images/image.png?cc=max-age%3D600&n=\(n)&tag=\(tag)"), options: .useURLCache)
        }
        let after = try probe.statistic("total_connections_received")
        let commands = try probe.statistic("total_commands_processed") - commandsBefore
        let opened = after - before - 1  // less the probe's connection counted in `after`
        #expect(commands >= 24 * 3, "the downloads sent only \(commands) commands: the cache did not use Redis")
        #expect(opened >= 1 && opened <= 4, "\(opened) connections opened for \(commands) commands")
        let open = try probe.connectedClients()
        #expect(open >= 1 && open <= options.maximumIdleConnections, "\(open) connections left open")
        #expect(server.stats(tag: tag).count == 24)
    }
}

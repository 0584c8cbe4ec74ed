import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// Downloads through caches on one redis-server, in one test process: each downloader with its own
/// `HTTPImageCache(redis:)` stands for a process of the fleet (its own memory layer, connections and
/// single-flight state). The fixture server counts what reaches the origin. Across real processes:
/// RedisFleetTests.
@Suite(.requires(.redisServer)) struct RedisDownloadTests {
    let server = FixtureServer.shared
    /// The caches' warnings (Redis unavailable, a timeout): shown when a single-flight expectation fails.
    let warnings = WarningLog()

    func downloader(_ redis: RedisServer, _ transport: ImageDownloaderTransport, options: RedisCacheOptions = RedisCacheFixtures.options())
        throws -> (ImageDownloader, HTTPImageCache) {
        let cache = try HTTPImageCache(redis: redis.url(), options: options)
        cache.warningHandler = { [warnings] in warnings.append($0) }
        let downloader = makeDownloader(transport) {
            $0.imageCache = nil
            $0.httpCache = cache
        }.0
        return (downloader, cache)
    }

    func flights(_ cache: HTTPImageCache) throws -> HTTPCacheFlights {
        try #require(cache.layer.flights)
    }

    /// Two "processes" download `url`: the first one's request is held at the origin, then the second's
    /// download starts and this returns once it waits for the first one's fetch.
    func holderAndWaiter(_ redis: RedisServer, _ transport: ImageDownloaderTransport, url: URL, tag: String,
                         options: RedisCacheOptions = RedisCacheFixtures.options()) async throws
        -> (holder: Task<ImageDownloadResult, any Error>, waiter: Task<ImageDownloadResult, any Error>, flights: HTTPCacheFlights) {
        let (a, _) = try downloader(redis, transport, options: options)
        let (b, cacheB) = try downloader(redis, transport, options: options)
        let holder = Task { try await a.image(for: url, options: .useURLCache) }
        await server.awaitRequests(tag: tag, count: 1)
        let waiter = Task { try await b.image(for: url, options: .useURLCache) }
        let flightsB = try flights(cacheB)
        #expect(await waitUntil { flightsB.waitsBegun == 1 }, "warnings: \(warnings.all)")
        return (holder, waiter, flightsB)
    }

    @Test(arguments: TestTransports.all)
    func anotherProcessIsServedFromRedis(_ transport: ImageDownloaderTransport) async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=max-age%3D600&tag=\(tag)")
        let first = try await downloader(redis, transport).0.image(for: url, options: .useURLCache)
        let second = try await downloader(redis, transport).0.image(for: url, options: .useURLCache)
        #expect(first.metrics?.source == .network && second.metrics?.source == .httpCache)
        #expect(second.data == first.data && second.image?.pixels == first.image?.pixels)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// The holder's request is held at the origin; the other process waits for it instead of asking too, then
    /// serves what the holder stored.
    @Test(arguments: TestTransports.all)
    func onlyOneProcessFetches(_ transport: ImageDownloaderTransport) async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&tag=\(tag)")
        let (holder, waiter, _) = try await holderAndWaiter(redis, transport, url: url, tag: tag)
        server.release(tag)
        let held = try await holder.value
        let waited = try await waiter.value
        #expect(held.metrics?.source == .network && held.metrics?.waitedForSharedFetch == false)
        #expect(waited.metrics?.source == .httpCache && waited.metrics?.waitedForSharedFetch == true)
        #expect(waited.data == held.data)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// In one process, downloads of the same URL through two downloaders on one cache share one flight: the
    /// second waits here without a Redis lock of its own.
    @Test func inProcessWaitersQueueBehindTheLocalHolder() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&tag=\(tag)")
        let cache = try HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options())
        cache.warningHandler = { [warnings] in warnings.append($0) }
        let make = { makeDownloader { $0.imageCache = nil; $0.httpCache = cache }.0 }
        let (a, b) = (make(), make())
        let first = Task { try await a.image(for: url, options: .useURLCache) }
        await server.awaitRequests(tag: tag, count: 1)
        let second = Task { try await b.image(for: url, options: .useURLCache) }
        let flights = try flights(cache)
        #expect(await waitUntil { flights.waitsBegun == 1 }, "warnings: \(warnings.all)")
        server.release(tag)
        _ = try await first.value
        #expect(try await second.value.metrics?.source == .httpCache)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// The holder is cancelled mid-fetch: it releases the lock and the waiting process takes it and fetches.
    /// By time: the waiter's request reaches the origin within the lock's lifetime plus a margin, while
    /// `maximumWait` is far above it (a waiter that merely gave up waiting cannot pass); by identity: the lock
    /// then holds a new token, the waiter's.
    @Test(arguments: TestTransports.all)
    func aCancelledHolderHandsOver(_ transport: ImageDownloaderTransport) async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&tag=\(tag)")
        var options = RedisCacheFixtures.options()
        options.maximumWait = 600
        let (holder, waiter, _) = try await holderAndWaiter(redis, transport, url: url, tag: tag, options: options)
        let probe = FleetLockProbe(redis)
        let holderToken = try probe.lockToken(of: url)
        #expect(holderToken != nil, "the holder fetches without a lock")
        holder.cancel()
        await #expect(throws: CancellationError.self) { try await holder.value }
        let log = await server.awaitRequests(tag: tag, count: 2, timeout: options.lockTimeout + FleetLockProbe.takeOverMargin)
        guard log.count >= 2 else {
            // No hand-over within the bound (the failure is recorded): end the waiter instead of waiting out maximumWait.
            waiter.cancel()
            _ = try? await waiter.value
            server.release(tag)
            return
        }
        let token = try probe.lockToken(of: url)
        #expect(token != nil && token != holderToken && token != RedisFlightLocks.doneMarker,
                "the lock is not the waiter's: \(token.map { String(decoding: $0, as: UTF8.self) } ?? "none")")
        server.release(tag)
        let result = try await waiter.value
        #expect(result.metrics?.source == .network && result.metrics?.waitedForSharedFetch == true)
        #expect(server.stats(tag: tag).count == 2)
    }

    /// A response that may not be stored: the waiters are told, and fetch for themselves.
    @Test(arguments: TestTransports.all)
    func notStorableWaitersFetchThemselves(_ transport: ImageDownloaderTransport) async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=no-store&tag=\(tag)")
        let (holder, waiter, _) = try await holderAndWaiter(redis, transport, url: url, tag: tag)
        server.release(tag)
        _ = try await holder.value
        let result = try await waiter.value
        #expect(result.metrics?.source == .network && result.metrics?.waitedForSharedFetch == true)
        #expect(server.stats(tag: tag).count == 2)
        #expect(try RedisProbe(redis).keys("od:v2:*").allSatisfy { $0.hasSuffix(":lock") })
    }

    /// A waiting download that is cancelled ends at once, with `.cancelled`; the holder is not disturbed.
    @Test func aCancelledWaiterEndsAtOnce() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&tag=\(tag)")
        let (holder, waiter, flightsB) = try await holderAndWaiter(redis, .urlSession, url: url, tag: tag)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(await waitUntil { flightsB.activeCount == 0 })
        server.release(tag)
        #expect(try await holder.value.metrics?.source == .network)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// Redis killed while downloads run: every download still succeeds (from the origin).
    @Test(arguments: TestTransports.all)
    func redisKilledMidRunFailsNoDownload(_ transport: ImageDownloaderTransport) async throws {
        let redis = try await RedisServer.start()
        let tag = newTag()
        let (downloader, _) = try downloader(redis, transport)
        let urls = (0..<24).map { server.url("/images/image.png?cc=max-age%3D600&n=\($0)&delay_ms=\($0 * 10)&tag=\(tag)") }
        let results = Task {
            await withTaskGroup(of: Bool.self) { group in
                for url in urls { group.addTask { (try? await downloader.image(for: url, options: .useURLCache)) != nil } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
        }
        await server.awaitRequests(tag: tag, count: 6)
        redis.stop()
        let outcomes = await results.value
        #expect(outcomes.count == 24 && outcomes.allSatisfy { $0 })
    }

    /// Shared-cache rules through the downloader: `private` and authorized responses are not shared.
    @Test func privateAndAuthorizedResponsesAreNotShared() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let privateURL = server.url("/images/image.png?cc=private%2C%20max-age%3D600&tag=\(tag)")
        _ = try await downloader(redis, .urlSession).0.image(for: privateURL, options: .useURLCache)
        _ = try await downloader(redis, .urlSession).0.image(for: privateURL, options: .useURLCache)
        #expect(server.stats(tag: tag).count == 2)

        // The downloader sends Authorization with every request.
        func authorized() throws -> ImageDownloader {
            let (made, _) = try downloader(redis, .urlSession)
            made.setValue("Bearer t0ken", forHTTPHeaderField: "Authorization")
            return made
        }
        let authTag = newTag()
        let authURL = server.url("/images/image.png?cc=max-age%3D600&tag=\(authTag)")
        _ = try await authorized().image(for: authURL, options: .useURLCache)
        _ = try await authorized().image(for: authURL, options: .useURLCache)
        #expect(server.stats(tag: authTag).count == 2)

        // With `public` it may be shared.
        let publicTag = newTag()
        let publicURL = server.url("/images/image.png?cc=public%2C%20max-age%3D600&tag=\(publicTag)")
        _ = try await authorized().image(for: publicURL, options: .useURLCache)
        #expect(try await authorized().image(for: publicURL, options: .useURLCache).metrics?.source == .httpCache)
        #expect(server.stats(tag: publicTag).count == 1)
    }
}

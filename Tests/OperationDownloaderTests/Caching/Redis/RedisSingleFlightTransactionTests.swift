import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// The single-flight at the transaction's fixed points, on a real redis-server, without a network: two caches
/// (two processes) and the responses handed in by the test.
@Suite(.requires(.redisServer)) struct RedisSingleFlightTransactionTests {
    typealias F = HTTPCacheFixtures
    let url = "http://images.test/flight.png"

    func transaction(_ cache: HTTPImageCache, policy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> HTTPCacheTransaction {
        var request = F.request(url)
        request.cachePolicy = policy
        return HTTPCacheTransaction(request: request, cache: cache, useURLCache: true, ignoreCachedResponse: false, handleCookies: false)
    }

    /// Resolves when `wait` ends (and the transaction has recorded how).
    func ended(_ transaction: HTTPCacheTransaction, _ wait: HTTPCacheFlightWait) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            transaction.whenSharedFetchEnds(wait) { continuation.resume() }
        }
    }

    @Test func theWaiterServesWhatTheHolderStored() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let a = try HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options())
        let b = try HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options())
        let holder = transaction(a)
        guard case .proceed(.send) = holder.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the first download should fetch")
            return
        }
        let waiter = transaction(b)
        guard case .wait(let wait) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the second download should wait")
            return
        }
        let response = try F.response(url, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600"]))
        #expect(holder.received(response) == .proceed)
        holder.completed(response, data: F.body(1, count: 100))
        await ended(waiter, wait)
        guard case .proceed(.serveFromCache(let served)) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the waiter did not serve the stored entry")
            return
        }
        #expect(served.data == F.body(1, count: 100))
    }

    /// A revalidation that waited for another process's 304 serves its fresh result instead of asking again.
    @Test func aWaitingRevalidationUsesTheOtherProcesssRefresh() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let a = try HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options())
        let b = try HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options())
        let old = Date().addingTimeInterval(-60)
        let first = try F.response(url, headers: F.headers(date: old, ["Cache-Control": "max-age=10", "ETag": "\"v1\""]))
        a.store(first, data: F.body(2, count: 100), for: F.request(url), requestDate: old, responseDate: old)
        let holder = transaction(a, policy: .reloadRevalidatingCacheData)
        guard case .proceed(.send(let conditional)) = holder.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the first revalidation should be sent")
            return
        }
        #expect(conditional.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        let waiter = transaction(b, policy: .reloadRevalidatingCacheData)
        guard case .wait(let wait) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the second revalidation should wait")
            return
        }
        let notModified = try F.response(url, status: 304, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600", "ETag": "\"v1\""]))
        guard case .serveFromCache = holder.received(notModified) else {
            Issue.record("the 304 did not refresh the entry")
            return
        }
        await ended(waiter, wait)
        guard case .proceed(.serveFromCache(let served)) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the waiting revalidation asked again")
            return
        }
        #expect(served.data == F.body(2, count: 100) && served.isFresh())
    }

    /// Past `maximumWait` a waiter stops waiting and fetches by itself (without the lock).
    @Test func aWaiterGivesUpAfterTheMaximumWait() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        var options = RedisCacheFixtures.options()
        options.maximumWait = 0.2
        let a = try HTTPImageCache(redis: redis.url(), options: options)
        let b = try HTTPImageCache(redis: redis.url(), options: options)
        let holder = transaction(a)
        guard case .proceed(.send) = holder.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the first download should fetch")
            return
        }
        let waiter = transaction(b)
        guard case .wait(let wait) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the second download should wait")
            return
        }
        await ended(waiter, wait)
        guard case .proceed(.send) = waiter.beginSharing(acceptsStatus: { $0 == 200 }) else {
            Issue.record("the waiter should fetch by itself")
            return
        }
        // It holds no lock: releasing it leaves the holder's lock alone.
        waiter.release()
        #expect(try RedisProbe(redis).keys("od:v2:*:lock").count == 1)
        holder.release()
        // The release is queued on the flights' queue: bounded wait for it.
        let probe = RedisProbe(redis)
        #expect(await waitUntil { ((try? probe.keys("od:v2:*:lock")) ?? ["?"]).isEmpty })
    }
}

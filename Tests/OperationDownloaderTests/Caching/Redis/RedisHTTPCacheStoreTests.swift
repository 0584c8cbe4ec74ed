import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// The cache on a real redis-server (the test's own): entries shared between cache instances (each one stands
/// for a process: its own memory layer and connections), keys and TTLs, Vary variants, invalid values, limits.
@Suite(.requires(.redisServer)) struct RedisHTTPCacheStoreTests {
    typealias F = HTTPCacheFixtures

    func store(_ cache: HTTPImageCache, _ url: String, headers: [String: String], body: Data, request: URLRequest? = nil,
               at date: Date = Date()) throws {
        let response = try F.response(url, headers: F.headers(date: date, headers))
        cache.store(response, data: body, for: request ?? F.request(url), requestDate: date, responseDate: date)
    }

    @Test func anEntryOneProcessStoresIsServedToAnother() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        let url = "http://images.test/a.png?size=2"
        let body = F.body(1, count: 50_000)
        let writer = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        try store(writer, url, headers: ["Cache-Control": "max-age=600"], body: body)

        let reader = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        guard case .fresh(let found) = reader.lookup(for: F.request(url)) else {
            Issue.record("the other process found no fresh entry")
            return
        }
        #expect(found.data == body && found.statusCode == 200 && found.appliesSharedRules)
        // Key `od:v2:{<sha256 of the cache key>}`, with a TTL: the freshness left (no validators).
        let probe = RedisProbe(server)
        let key = RedisCacheFixtures.entryKey(for: F.url(url))
        #expect(try probe.keys("od:v2:*") == [key])
        let ttl = try probe.pttl(key)
        #expect(ttl > 500_000 && ttl <= 600_000)
        // The value is the disk entry format.
        let value = try #require(try probe.get(key))
        #expect(try HTTPCacheEntryFile.decode(value).body == body)
    }

    @Test func keyPrefixSeparatesCaches() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        let url = "http://images.test/b.png"
        let thumbs = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options(prefix: "thumbs"))
        try store(thumbs, url, headers: ["Cache-Control": "max-age=600"], body: F.body(2, count: 100))
        let other = try HTTPImageCache(redis: server.url(), keyPrefix: "previews")
        #expect(other.cachedResponse(for: F.request(url)) == nil)
        #expect(try RedisProbe(server).keys().allSatisfy { $0.hasPrefix("thumbs:v2:") })
        // removeAll takes only its own prefix.
        try store(other, url, headers: ["Cache-Control": "max-age=600"], body: F.body(3, count: 100))
        thumbs.removeAll()
        #expect(try RedisProbe(server).keys().allSatisfy { $0.hasPrefix("previews:v2:") })
        #expect(other.cachedResponse(for: F.request(url)) != nil)
    }

    /// A value that is not a valid entry (garbage, a cut entry, another key's entry) is a miss and is deleted.
    @Test func invalidValuesAreMissesAndDeleted() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        let probe = RedisProbe(server)
        let url = "http://images.test/c.png"
        let key = RedisCacheFixtures.entryKey(for: F.url(url))
        let cache = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        try store(cache, url, headers: ["Cache-Control": "max-age=600"], body: F.body(4, count: 5000))
        let valid = try #require(try probe.get(key))
        let otherKeyEntry = HTTPCacheEntryFile(kind: .response, key: "http://elsewhere.test:80/x.png", statusCode: 200,
                                               headers: HTTPHeaderFields([("Cache-Control", "max-age=600")]), varyValues: [:],
                                               requestDate: Date(), responseDate: Date(), body: Data("x".utf8)).encoded()
        var flipped = valid
        flipped[valid.count - 10] ^= 0xFF
        for garbage in [Data("garbage".utf8), valid.prefix(valid.count - 7), flipped, otherKeyEntry, Data()] {
            _ = try probe.command("SET", key, garbage)
            // A new instance: no memory layer to answer from.
            let reader = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
            #expect(reader.cachedResponse(for: F.request(url)) == nil)
            #expect(try probe.get(key) == nil, "an invalid value was left in place")
        }
    }

    /// Each variant of a response with Vary under its own key; every process finds the one its request selects.
    @Test func varyVariantsHaveTheirOwnKeys() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        let url = "http://images.test/v.png"
        let writer = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        let webp = F.request(url, headers: ["Accept": "image/webp"])
        let png = F.request(url, headers: ["Accept": "image/png"])
        try store(writer, url, headers: ["Cache-Control": "max-age=600", "Vary": "Accept"], body: F.body(5, count: 300), request: webp)
        try store(writer, url, headers: ["Cache-Control": "max-age=600", "Vary": "Accept"], body: F.body(6, count: 300), request: png)
        let keys = try RedisProbe(server).keys("od:v2:*")
        #expect(keys.count == 3, "the variant index and two variants: \(keys)")
        let reader = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        #expect(reader.cachedResponse(for: webp)?.data == F.body(5, count: 300))
        #expect(reader.cachedResponse(for: png)?.data == F.body(6, count: 300))
        #expect(reader.cachedResponse(for: F.request(url, headers: ["Accept": "image/avif"])) == nil)
        for key in keys { #expect(try RedisProbe(server).pttl(key) > 0, "\(key) has no TTL") }
    }

    @Test func bodiesOverTheLimitAreNotStored() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        var options = RedisCacheFixtures.options()
        options.maximumBodySize = 1000
        let cache = try HTTPImageCache(redis: server.url(), options: options)
        try store(cache, "http://images.test/big.png", headers: ["Cache-Control": "max-age=600"], body: F.body(7, count: 1001))
        try store(cache, "http://images.test/small.png", headers: ["Cache-Control": "max-age=600"], body: F.body(8, count: 1000))
        #expect(try RedisProbe(server).keys("od:v2:*") == [RedisCacheFixtures.entryKey(for: F.url("http://images.test/small.png"))])
    }

    /// The memory layer answers only while the value in Redis is the one it holds (a header read proves it);
    /// another process's newer entry, or its removal, shows at once.
    @Test func memoryLayerFollowsOtherProcesses() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        let url = "http://images.test/m.png"
        let a = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        let b = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        try store(a, url, headers: ["Cache-Control": "max-age=600"], body: F.body(9, count: 100))
        #expect(a.cachedResponse(for: F.request(url))?.data == F.body(9, count: 100))
        #expect(a.currentMemoryUsage > 0)
        try store(b, url, headers: ["Cache-Control": "max-age=600"], body: F.body(10, count: 100))
        #expect(a.cachedResponse(for: F.request(url))?.data == F.body(10, count: 100))
        b.removeCachedResponse(for: F.request(url))
        #expect(a.cachedResponse(for: F.request(url)) == nil)
    }

    /// A 304 one process applies (the refreshed dates) is what the next process reads.
    @Test func aRevalidationIsSeenByTheNextProcess() async throws {
        let server = try await RedisServer.start(); defer { server.stop() }
        let url = "http://images.test/r.png"
        let old = Date().addingTimeInterval(-120)
        let a = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        try store(a, url, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""], body: F.body(11, count: 100), at: old)
        guard case .stale(let stale, let validators) = a.lookup(for: F.request(url)) else {
            Issue.record("expected a stale entry")
            return
        }
        #expect(validators["If-None-Match"] == "\"v1\"")
        let now = Date()
        let notModified = try F.response(url, status: 304, headers: F.headers(date: now, ["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        #expect(a.refreshed(with: notModified, for: F.request(url), stored: stale, requestDate: now, responseDate: now) != nil)
        a.waitForQueuedWrites()
        let b = try HTTPImageCache(redis: server.url(), options: RedisCacheFixtures.options())
        guard case .fresh(let refreshed) = b.lookup(for: F.request(url)) else {
            Issue.record("the next process did not see the revalidation")
            return
        }
        #expect(refreshed.data == F.body(11, count: 100))
    }
}

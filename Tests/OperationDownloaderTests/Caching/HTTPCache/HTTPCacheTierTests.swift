import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// `HTTPImageCache(tiers:)` with two directories standing for a near tier and a far one (the Redis tier's own
/// tests are in Caching/Redis/HTTPCacheTierRedisTests): where hits come from, what is copied up, what every write
/// reaches, and freshness judged on the stored response wherever it sits. Each cache instance stands for a
/// process (its own memory layer).
@Suite struct HTTPCacheTierTests {
    typealias F = HTTPCacheFixtures
    let t0 = HTTPCacheFixtures.t0

    struct Pair {
        let near = TemporaryCacheDirectory("near")
        let far = TemporaryCacheDirectory("far")

        func remove() {
            near.remove()
            far.remove()
        }

        /// A tiered cache over fresh instances of both directories (a new process).
        func tiered(nearCapacity: Int = 150 * 1024 * 1024) throws -> HTTPImageCache {
            try HTTPImageCache(tiers: [HTTPImageCache(directory: near.url, diskCapacity: nearCapacity),
                                       HTTPImageCache(directory: far.url)])
        }

        func farOnly() -> HTTPImageCache { HTTPImageCache(directory: far.url, memoryCapacity: 0) }
        func nearOnly() -> HTTPImageCache { HTTPImageCache(directory: near.url, memoryCapacity: 0) }
    }

    func put(_ cache: HTTPImageCache, _ url: String, _ body: Data, headers: [String: String], at: Date) throws {
        cache.store(try F.response(url, headers: F.headers(date: at, headers)), data: body, for: F.request(url),
                    requestDate: at, responseDate: at)
    }

    func file(_ directory: TemporaryCacheDirectory, _ url: String) throws -> Data? {
        let name = HTTPCacheKey.fileName(for: try #require(HTTPCacheKey.key(for: F.url(url))))
        return FileManager.default.contents(atPath: directory.url.appendingPathComponent(name).path)
    }

    @Test func aHitInTheFarTierIsCopiedUpByteForByte() throws {
        let dirs = Pair(); defer { dirs.remove() }
        let url = "http://127.0.0.1:9/tier/up.png"
        try put(dirs.farOnly(), url, F.body(1, count: 20_000), headers: ["Cache-Control": "max-age=600", "ETag": "\"a\""], at: t0)
        #expect(try file(dirs.near, url) == nil)

        let cache = try dirs.tiered()
        guard case .fresh(let hit) = cache.lookup(for: F.request(url), now: t0.addingTimeInterval(100)) else {
            Issue.record("expected a fresh hit from the far tier"); return
        }
        #expect(hit.data == F.body(1, count: 20_000))
        cache.waitForQueuedWrites()
        // The same bytes, dates and all: the copy's age runs from the origin's response, not from the copy.
        let copied = try #require(try file(dirs.near, url))
        #expect(copied == (try file(dirs.far, url)))
        guard case .stale = dirs.nearOnly().lookup(for: F.request(url), now: t0.addingTimeInterval(700)) else {
            Issue.record("the copy should go stale when the original does"); return
        }
        // The next process finds it in the near tier even with the far one gone.
        dirs.far.remove()
        guard case .fresh = try dirs.tiered().lookup(for: F.request(url), now: t0.addingTimeInterval(200)) else {
            Issue.record("expected a fresh hit from the near tier"); return
        }
    }

    @Test func writesAndRemovalsReachEveryTier() throws {
        let dirs = Pair(); defer { dirs.remove() }
        let url = "http://127.0.0.1:9/tier/write.png"
        let cache = try dirs.tiered()
        try put(cache, url, F.body(2, count: 3000), headers: ["Cache-Control": "max-age=600"], at: t0)
        #expect(try file(dirs.near, url) != nil && file(dirs.near, url) == file(dirs.far, url))
        cache.removeCachedResponse(for: F.request(url))
        #expect(try file(dirs.near, url) == nil && file(dirs.far, url) == nil)
    }

    /// Another process stored (or revalidated) a fresher copy in the far tier: it is served instead of the
    /// near tier's stale one, and replaces it.
    @Test func aStaleNearCopyGivesWayToAFreshFarOne() throws {
        let dirs = Pair(); defer { dirs.remove() }
        let url = "http://127.0.0.1:9/tier/fresher.png"
        let cache = try dirs.tiered()
        try put(cache, url, F.body(3, count: 3000), headers: ["Cache-Control": "max-age=60", "ETag": "\"old\""], at: t0)
        try put(dirs.farOnly(), url, F.body(4, count: 3000), headers: ["Cache-Control": "max-age=60", "ETag": "\"new\""],
                at: t0.addingTimeInterval(100))
        guard case .fresh(let hit) = cache.lookup(for: F.request(url), now: t0.addingTimeInterval(120)) else {
            Issue.record("expected the far tier's fresh copy"); return
        }
        #expect(hit.data == F.body(4, count: 3000))
        cache.waitForQueuedWrites()
        #expect(dirs.nearOnly().cachedResponse(for: F.request(url))?.data == F.body(4, count: 3000))
        // With nothing fresh anywhere, the nearest copy is the one revalidated.
        guard case .stale(let stale, let validators) = cache.lookup(for: F.request(url), now: t0.addingTimeInterval(500)) else {
            Issue.record("expected a stale entry"); return
        }
        #expect(stale.data == F.body(4, count: 3000) && validators["If-None-Match"] == "\"new\"")
        // The same in a process that has nothing in memory: the near tier's stale copy is passed over.
        try put(dirs.farOnly(), url, F.body(5, count: 3000), headers: ["Cache-Control": "max-age=60", "ETag": "\"newest\""],
                at: t0.addingTimeInterval(600))
        guard case .fresh(let newest) = try dirs.tiered().lookup(for: F.request(url), now: t0.addingTimeInterval(620)) else {
            Issue.record("expected the far tier's fresh copy in a new process"); return
        }
        #expect(newest.data == F.body(5, count: 3000))
    }

    /// A reload (`.reloadRevalidatingCacheData`) revalidates the fresh copy further down, not the stale one nearer:
    /// it sends the newer validator, and a fresh immutable copy there is served without asking.
    @Test func aReloadRevalidatesTheFreshFarCopy() throws {
        let dirs = Pair(); defer { dirs.remove() }
        let url = "http://127.0.0.1:9/tier/reload.png"
        let cache = try dirs.tiered()
        try put(cache, url, F.body(6, count: 3000), headers: ["Cache-Control": "max-age=60", "ETag": "\"old\""], at: t0)
        try put(dirs.farOnly(), url, F.body(7, count: 3000), headers: ["Cache-Control": "max-age=60", "ETag": "\"new\""],
                at: t0.addingTimeInterval(100))
        var reload = F.request(url)
        reload.cachePolicy = .reloadRevalidatingCacheData
        guard case .load(let sent, let revalidating, _) = cache.plan(for: reload, useURLCache: true, now: t0.addingTimeInterval(120)) else {
            Issue.record("a reload should be sent"); return
        }
        #expect(sent.value(forHTTPHeaderField: "If-None-Match") == "\"new\"")
        #expect(revalidating?.data == F.body(7, count: 3000))
        try put(dirs.farOnly(), url, F.body(8, count: 3000), headers: ["Cache-Control": "max-age=60, immutable", "ETag": "\"fixed\""],
                at: t0.addingTimeInterval(200))
        guard case .serveFromCache(let served) = try dirs.tiered().plan(for: reload, useURLCache: true, now: t0.addingTimeInterval(220)) else {
            Issue.record("a fresh immutable copy further down should be served"); return
        }
        #expect(served.data == F.body(8, count: 3000))
    }

    @Test func aRevalidationUpdatesEveryTier() throws {
        let dirs = Pair(); defer { dirs.remove() }
        let url = "http://127.0.0.1:9/tier/304.png"
        let cache = try dirs.tiered()
        try put(cache, url, F.body(5, count: 3000), headers: ["Cache-Control": "max-age=60", "ETag": "\"v\""], at: t0)
        let later = t0.addingTimeInterval(300)
        guard case .stale(let stale, _) = cache.lookup(for: F.request(url), now: later) else { Issue.record("expected stale"); return }
        let notModified = try F.response(url, status: 304, headers: F.headers(date: later, ["Cache-Control": "max-age=600", "ETag": "\"v\""]))
        #expect(cache.refreshed(with: notModified, for: F.request(url), stored: stale, requestDate: later, responseDate: later) != nil)
        cache.waitForQueuedWrites()
        for reader in [dirs.nearOnly(), dirs.farOnly()] {
            guard case .fresh(let refreshed) = reader.lookup(for: F.request(url), now: later.addingTimeInterval(100)) else {
                Issue.record("a tier was not refreshed"); return
            }
            #expect(refreshed.data == F.body(5, count: 3000))
        }
    }

    /// Each tier keeps what its own rules allow: a body over the near tier's limit (a tenth of its capacity)
    /// lives in the far tier only, and is served from there.
    @Test func aBodyTooLargeForTheNearTierStaysInTheFarOne() throws {
        let dirs = Pair(); defer { dirs.remove() }
        let url = "http://127.0.0.1:9/tier/large.png"
        let cache = try dirs.tiered(nearCapacity: 100_000)
        try put(cache, url, F.body(6, count: 20_000), headers: ["Cache-Control": "max-age=600"], at: t0)
        cache.waitForQueuedWrites()
        #expect(try file(dirs.near, url) == nil && file(dirs.far, url) != nil)
        let next = try dirs.tiered(nearCapacity: 100_000)
        #expect(next.cachedResponse(for: F.request(url))?.data == F.body(6, count: 20_000))
        next.waitForQueuedWrites()
        #expect(try file(dirs.near, url) == nil)
    }

    @Test func variantsAreFoundThroughTheTiers() throws {
        let dirs = Pair(); defer { dirs.remove() }
        let url = "http://127.0.0.1:9/tier/vary.png"
        let far = dirs.farOnly()
        for (accept, seed) in [("image/webp", 7), ("image/png", 8)] {
            far.store(try F.response(url, headers: F.headers(["Cache-Control": "max-age=600", "Vary": "Accept"])),
                      data: F.body(seed, count: 500), for: F.request(url, headers: ["Accept": accept]), requestDate: t0, responseDate: t0)
        }
        let cache = try dirs.tiered()
        #expect(cache.cachedResponse(for: F.request(url, headers: ["Accept": "image/png"]))?.data == F.body(8, count: 500))
        #expect(cache.cachedResponse(for: F.request(url, headers: ["Accept": "image/webp"]))?.data == F.body(7, count: 500))
    }

    @Test func tiersAreCheckedAndDescribed() throws {
        let dirs = Pair(); defer { dirs.remove() }
        #expect(throws: HTTPCacheTiersError.noTiers) { try HTTPImageCache(tiers: []) }
        let near = HTTPImageCache(directory: dirs.near.url, diskCapacity: 1_000_000, memoryCapacity: 12345)
        #expect(throws: HTTPCacheTiersError.repeatedTier) { try HTTPImageCache(tiers: [near, near]) }
        let tiered = try HTTPImageCache(tiers: [near, HTTPImageCache(directory: dirs.far.url)])
        #expect(throws: HTTPCacheTiersError.repeatedTier) { try HTTPImageCache(tiers: [tiered, near]) }
        #expect(tiered.directory == dirs.near.url.standardizedFileURL)
        #expect(tiered.diskCapacity == 1_000_000 && tiered.memoryCapacity == 12345)
        #expect(!tiered.isShared)
        #expect(tiered.layer.tiers.map(\.storage) == ["directory", "directory"])
    }
}

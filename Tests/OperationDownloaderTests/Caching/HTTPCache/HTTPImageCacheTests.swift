import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import OperationDownloader

@Suite struct HTTPImageCacheTests {
    typealias F = HTTPCacheFixtures
    let t0 = HTTPCacheFixtures.t0

    /// Stores `body` for `url` with `headers`, received at `at`.
    func put(_ cache: HTTPImageCache, _ url: String, _ body: Data, headers: [String: String],
             requestHeaders: [String: String] = [:], at: Date = HTTPCacheFixtures.t0) throws {
        cache.store(try F.response(url, headers: headers), data: body, for: F.request(url, headers: requestHeaders),
                    requestDate: at, responseDate: at)
    }

    // MARK: Round trips

    @Test func freshEntryIsServedThenStaleOneIsRevalidated() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/img/a.png"
        let body = F.body(1, count: 30_000)
        try put(cache, url, body, headers: F.headers(["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        #expect(dir.entryFiles.count == 1)

        guard case .fresh(let hit) = cache.lookup(for: F.request(url), now: t0.addingTimeInterval(30)) else {
            Issue.record("expected a fresh hit"); return
        }
        #expect(hit.data == body)
        #expect(hit.statusCode == 200)
        #expect(hit.response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(hit.response.value(forHTTPHeaderField: "Content-Length") == "30000")
        #expect(hit.response.url?.absoluteString == url)

        guard case .stale(let stale, let validators) = cache.lookup(for: F.request(url), now: t0.addingTimeInterval(61)) else {
            Issue.record("expected a stale entry"); return
        }
        #expect(stale.data == body)
        #expect(validators == ["If-None-Match": "\"v1\""])
    }

    @Test func planServesFreshAndRevalidatesStale() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/plan.png"
        let lastModified = HTTPDate.format(t0.addingTimeInterval(-86_400))
        try put(cache, url, F.body(2, count: 500),
                headers: F.headers(["Cache-Control": "max-age=60", "ETag": "\"e\"", "Last-Modified": lastModified]))

        guard case .serveFromCache(let served) = cache.plan(for: F.request(url), useURLCache: true, now: t0.addingTimeInterval(1))
        else { Issue.record("fresh entry should be served"); return }
        #expect(served.data == F.body(2, count: 500))

        guard case .load(let conditional, let revalidating, let stores) =
                cache.plan(for: F.request(url), useURLCache: true, now: t0.addingTimeInterval(120))
        else { Issue.record("stale entry should be revalidated"); return }
        #expect(conditional.value(forHTTPHeaderField: "If-None-Match") == "\"e\"")
        #expect(conditional.value(forHTTPHeaderField: "If-Modified-Since") == lastModified)
        #expect(revalidating?.data == F.body(2, count: 500))
        #expect(stores)

        // Without .useURLCache nothing is read (and the plan says nothing is written).
        guard case .load(let plain, let none, let storesWithout) =
                cache.plan(for: F.request(url), useURLCache: false, now: t0.addingTimeInterval(1))
        else { Issue.record("without the option the request is sent"); return }
        #expect(plain.value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(none == nil)
        #expect(!storesWithout)

        // Reload-ignoring: sent unconditionally even though a fresh entry exists.
        var reload = F.request(url); reload.cachePolicy = .reloadIgnoringLocalCacheData
        guard case .load(let reloaded, nil, true) = cache.plan(for: reload, useURLCache: true, now: t0.addingTimeInterval(1))
        else { Issue.record("reload-ignoring must load"); return }
        #expect(reloaded.value(forHTTPHeaderField: "If-None-Match") == nil)

        // returnCacheDataElseLoad / DontLoad serve a stale entry without validation.
        for policy in [URLRequest.CachePolicy.returnCacheDataElseLoad, .returnCacheDataDontLoad] {
            var request = F.request(url); request.cachePolicy = policy
            guard case .serveFromCache = cache.plan(for: request, useURLCache: true, now: t0.addingTimeInterval(99_999))
            else { Issue.record("\(policy.rawValue) should serve the stale entry"); return }
        }
        // ... and on a miss, DontLoad fails while ElseLoad loads.
        var dontLoad = F.request("http://127.0.0.1:8080/missing.png"); dontLoad.cachePolicy = .returnCacheDataDontLoad
        guard case .unavailable = cache.plan(for: dontLoad, useURLCache: true) else {
            Issue.record("returnCacheDataDontLoad miss must be unavailable"); return
        }
        var dontLoadStored = F.request(url); dontLoadStored.cachePolicy = .returnCacheDataDontLoad
        guard case .unavailable = cache.plan(for: dontLoadStored, useURLCache: false) else {
            Issue.record("returnCacheDataDontLoad without .useURLCache may not read the cache"); return
        }
        var elseLoad = dontLoad; elseLoad.cachePolicy = .returnCacheDataElseLoad
        guard case .load(_, nil, true) = cache.plan(for: elseLoad, useURLCache: true) else {
            Issue.record("returnCacheDataElseLoad miss must load"); return
        }

        // reloadRevalidatingCacheData revalidates even a fresh entry.
        var revalidate = F.request(url); revalidate.cachePolicy = .reloadRevalidatingCacheData
        guard case .load(let forced, .some, true) = cache.plan(for: revalidate, useURLCache: true, now: t0.addingTimeInterval(1))
        else { Issue.record("reloadRevalidatingCacheData must revalidate"); return }
        #expect(forced.value(forHTTPHeaderField: "If-None-Match") == "\"e\"")
    }

    @Test func noStoreIsNeverStoredAndRemovesTheOldEntry() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/secret.png"
        try put(cache, url, F.body(3, count: 100), headers: F.headers(["Cache-Control": "no-store"]))
        #expect(dir.entryFiles.isEmpty)
        #expect(cache.cachedResponse(for: F.request(url)) == nil)

        try put(cache, url, F.body(3, count: 100), headers: F.headers(["Cache-Control": "max-age=600"]))
        #expect(dir.entryFiles.count == 1)
        try put(cache, url, F.body(4, count: 100), headers: F.headers(["Cache-Control": "no-store"]))
        #expect(dir.entryFiles.isEmpty)
        #expect(cache.cachedResponse(for: F.request(url)) == nil)
    }

    @Test func notModifiedServesStoredBodyAndUpdatesFreshness() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/revalidated.jpg"
        let body = F.body(5, count: 30_000)
        try put(cache, url, body, headers: F.headers(["Cache-Control": "no-cache", "ETag": "\"r1\""]))
        guard case .stale(let stored, let validators) = cache.lookup(for: F.request(url), now: t0.addingTimeInterval(1)) else {
            Issue.record("no-cache entry must be revalidated"); return
        }
        #expect(validators["If-None-Match"] == "\"r1\"")

        let later = t0.addingTimeInterval(100)
        let notModified = try F.response(url, status: 304, headers: F.headers(date: later, ["Cache-Control": "max-age=300",
                                                                                           "ETag": "\"r1\""]))
        let refreshed = try #require(cache.refreshed(with: notModified, for: F.request(url), stored: stored,
                                                     requestDate: later, responseDate: later))
        #expect(refreshed.data == body)
        #expect(refreshed.statusCode == 200)
        #expect(refreshed.storedDate == later)
        #expect(refreshed.response.value(forHTTPHeaderField: "Cache-Control") == "max-age=300")

        // The refresh reaches the disk (queued on the cache's I/O queue): a new cache on the directory sees the new
        // freshness and the same bytes.
        cache.waitForQueuedWrites()
        let other = HTTPImageCache(directory: dir.url, memoryCapacity: 0)
        guard case .fresh(let again) = other.lookup(for: F.request(url), now: later.addingTimeInterval(200)) else {
            Issue.record("refreshed entry should be fresh for 300 s"); return
        }
        #expect(again.data == body)

        // A 304 whose ETag names another representation is not applied.
        let mismatched = try F.response(url, status: 304, headers: ["ETag": "\"r2\""])
        #expect(cache.refreshed(with: mismatched, for: F.request(url), stored: stored, requestDate: later, responseDate: later) == nil)
    }

    @Test func newBodyReplacesOldOne() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/changing.png"
        try put(cache, url, F.body(6, count: 2000), headers: F.headers(["Cache-Control": "max-age=0", "ETag": "\"1\""]))
        try put(cache, url, F.body(7, count: 3000), headers: F.headers(["Cache-Control": "max-age=600", "ETag": "\"2\""]))
        #expect(dir.entryFiles.count == 1)
        let hit = try #require(cache.cachedResponse(for: F.request(url)))
        #expect(hit.data == F.body(7, count: 3000))
        #expect(hit.response.value(forHTTPHeaderField: "ETag") == "\"2\"")
        let fromDisk = try #require(HTTPImageCache(directory: dir.url).cachedResponse(for: F.request(url)))
        #expect(fromDisk.data == F.body(7, count: 3000))
    }

    @Test func keysIncludeSchemeHostPortPathAndQuery() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let urls = ["http://127.0.0.1:8080/k.png", "http://127.0.0.1:8080/k.png?size=1", "http://127.0.0.1:8080/k.png?size=2",
                    "https://127.0.0.1:8080/k.png", "http://127.0.0.1:8081/k.png", "http://localhost:8080/k.png",
                    "http://127.0.0.1:8080/K.png"]
        for (i, url) in urls.enumerated() {
            try put(cache, url, F.body(100 + i, count: 64), headers: F.headers(["Cache-Control": "max-age=60"]))
        }
        #expect(dir.entryFiles.count == urls.count)
        let reader = HTTPImageCache(directory: dir.url, memoryCapacity: 0)
        for (i, url) in urls.enumerated() {
            #expect(reader.cachedResponse(for: F.request(url))?.data == F.body(100 + i, count: 64), "\(url)")
        }
        // Case of scheme and host, the default port and the fragment do not matter.
        #expect(HTTPCacheKey.key(for: F.url("HTTP://Example.COM/a.png#x")) == HTTPCacheKey.key(for: F.url("http://example.com:80/a.png")))
        #expect(HTTPCacheKey.key(for: F.url("https://example.com/a.png")) == "https://example.com:443/a.png")
        #expect(HTTPCacheKey.key(for: F.url("ftp://example.com/a.png")) == nil)
        #expect(HTTPCacheKey.key(for: F.url("data:image/png;base64,AAAA")) == nil)
    }

    @Test func onlyGetRequestsUseTheCache() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/post.png"
        var post = F.request(url); post.httpMethod = "POST"
        cache.store(try F.response(url, headers: F.headers(["Cache-Control": "max-age=60"])), data: F.body(8, count: 10),
                    for: post, requestDate: t0, responseDate: t0)
        #expect(dir.entryFiles.isEmpty)
        try put(cache, url, F.body(8, count: 10), headers: F.headers(["Cache-Control": "max-age=60"]))
        #expect(cache.cachedResponse(for: post) == nil)
        #expect(cache.cachedResponse(for: F.request(url)) != nil)
    }

    @Test func varyOnAcceptSelectsByRequestHeader() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/negotiated"
        try put(cache, url, F.body(9, count: 100), headers: F.headers(["Cache-Control": "max-age=60", "Vary": "Accept"]),
                requestHeaders: ["Accept": "image/webp,image/*"])
        #expect(cache.cachedResponse(for: F.request(url, headers: ["Accept": "image/webp, image/*"])) != nil)
        #expect(cache.cachedResponse(for: F.request(url, headers: ["Accept": "image/png"])) == nil)
        #expect(cache.cachedResponse(for: F.request(url)) == nil)
        // Also after a reload from disk.
        #expect(HTTPImageCache(directory: dir.url).cachedResponse(for: F.request(url, headers: ["Accept": "image/png"])) == nil)

        // Any request field may be named; an absent field matches only an absent field.
        let other = "http://127.0.0.1:8080/by-cookie"
        try put(cache, other, F.body(10, count: 100), headers: F.headers(["Cache-Control": "max-age=60", "Vary": "Cookie"]))
        #expect(cache.cachedResponse(for: F.request(other)) != nil)
        #expect(cache.cachedResponse(for: F.request(other, headers: ["Cookie": "a=1"])) == nil)
        // Vary: * is never stored, and supersedes what was.
        try put(cache, other, F.body(10, count: 100), headers: F.headers(["Cache-Control": "max-age=60", "Vary": "*"]))
        #expect(cache.cachedResponse(for: F.request(other)) == nil)
        // Left: the first URL's variant index and its one variant.
        #expect(dir.entryFiles.count == 2)
    }

    @Test func storedHeadersDropHopByHopFieldsAndDecodedEncoding() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/gz.png"
        try put(cache, url, F.body(11, count: 1234), headers: F.headers([
            "Cache-Control": "max-age=60", "Content-Encoding": "gzip", "Content-Length": "700", "Set-Cookie": "s=1",
            "Connection": "keep-alive", "X-Custom": "kept",
        ]))
        let hit = try #require(HTTPImageCache(directory: dir.url).cachedResponse(for: F.request(url)))
        #expect(hit.response.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(hit.response.value(forHTTPHeaderField: "Content-Length") == "1234")
        // Stored (RFC 9111 §3.1), never replayed into cookie storage (see HTTPCacheDownloaderTests).
        #expect(hit.response.value(forHTTPHeaderField: "Set-Cookie") == "s=1")
        #expect(hit.response.value(forHTTPHeaderField: "Connection") == nil)
        #expect(hit.response.value(forHTTPHeaderField: "X-Custom") == "kept")
    }

    // MARK: Sharing a directory

    @Test func secondCacheOnTheSameDirectorySeesEntriesAndReplacements() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let first = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:8080/shared.png"
        try put(first, url, F.body(12, count: 4000), headers: F.headers(["Cache-Control": "max-age=60"]))
        #expect(first.cachedResponse(for: F.request(url))?.data == F.body(12, count: 4000))  // now in first's memory

        let second = HTTPImageCache(directory: dir.url)
        #expect(second.cachedResponse(for: F.request(url))?.data == F.body(12, count: 4000))
        try put(second, url, F.body(13, count: 5000), headers: F.headers(["Cache-Control": "max-age=60"]))
        // The first cache's memory layer notices the file was replaced.
        #expect(first.cachedResponse(for: F.request(url))?.data == F.body(13, count: 5000))
        second.removeAll()
        #expect(first.cachedResponse(for: F.request(url)) == nil)
    }

    @Test func concurrentWritersAndReadersNeverSeeAMixedEntry() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let caches = [HTTPImageCache(directory: dir.url), HTTPImageCache(directory: dir.url, memoryCapacity: 0)]
        let responses = try (0..<4).map { key in
            try F.response("http://127.0.0.1:8080/race\(key).png", headers: F.headers(["Cache-Control": "max-age=600"]))
        }
        let failures = HTTPCacheTestCounter()
        await offCooperativePool { DispatchQueue.concurrentPerform(iterations: 400) { i in
            let key = i % 4
            let cache = caches[i % 2]
            let request = F.request("http://127.0.0.1:8080/race\(key).png")
            if i % 3 == 0 {
                // Body = one byte value repeated, with the value also in a header: a mixed entry would disagree.
                var response = responses[key]
                let seq = i % 251
                response = HTTPURLResponse(url: response.url ?? F.url("http://x/"), statusCode: 200, httpVersion: "HTTP/1.1",
                                           headerFields: ["Cache-Control": "max-age=600", "X-Seq": "\(seq)"]) ?? response
                cache.store(response, data: Data(repeating: UInt8(seq), count: 8000 + seq), for: request,
                            requestDate: Date(), responseDate: Date())
            } else if let hit = cache.cachedResponse(for: request) {
                let seq = Int(hit.response.value(forHTTPHeaderField: "X-Seq") ?? "") ?? -1
                if hit.data != Data(repeating: UInt8(truncatingIfNeeded: seq), count: 8000 + seq) { failures.increment() }
            }
        } }
        #expect(failures.value == 0)
        #expect(dir.entryFiles.count == 4)
        let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: dir.url.path)) ?? [])
            .filter { $0.hasPrefix(HTTPCacheDirectory.temporaryPrefix) }
        #expect(leftovers.isEmpty)
    }
}

extension HTTPCacheLookup {
    var isMiss: Bool {
        if case .miss = self { return true }
        return false
    }
}

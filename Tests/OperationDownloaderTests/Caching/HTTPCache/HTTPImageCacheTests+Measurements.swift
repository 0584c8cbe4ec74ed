import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import OperationDownloader

extension HTTPImageCacheTests {
    // MARK: Measurements (printed for the report; nothing here asserts a time)

    /// Set to measure 1000 mixed entries (37 MB written; printed for Docs/HTTPCache.md). Off by default: that
    /// much disk and CPU on a shared 2-core machine delays the cancellation tests that run in parallel.
    static let measureLarge = ProcessInfo.processInfo.environment["OPERATIONDOWNLOADER_MEASURE"] != nil

    @Test func diskUsageOfMixedEntries() async throws {
        try await mixedEntries(count: 150)
    }

    @Test(.enabled(if: measureLarge)) func diskUsageOfAThousandMixedEntries() async throws {
        try await mixedEntries(count: 1000)
    }

    func mixedEntries(count: Int) async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let start = Date()
        let base = t0
        let (bodyBytes, stored, files) = await offCooperativePool { () -> (Int, Int, Int) in
            var rng = HTTPCacheTestRandom(seed: 7)
            var bodyBytes = 0
            var stored = 0
            var files = 0
            for i in 0..<count {
                // Mixed: icons (200 B–4 KB), thumbnails (10–60 KB), photos (100–400 KB); a seventh uncacheable.
                let kind = i % 10
                let size: Int = kind < 4 ? 200 + Int(rng.next() % 3800)
                    : kind < 9 ? 10_000 + Int(rng.next() % 50_000) : 100_000 + Int(rng.next() % 300_000)
                let headers: [String: String] = switch i % 7 {
                case 0: ["Cache-Control": "no-store"]
                case 1: ["ETag": "\"\(i)\""]
                case 2: ["Last-Modified": HTTPDate.format(base.addingTimeInterval(-86_400))]
                case 3: ["Cache-Control": "max-age=60", "Vary": "Accept"]
                default: ["Cache-Control": "max-age=3600", "ETag": "\"\(i)\""]
                }
                let url = F.url("http://127.0.0.1:8080/mixed/\(i).img?v=\(i % 3)")
                guard let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                     headerFields: F.headers(headers)) else { continue }
                cache.store(response, data: F.body(i, count: size), for: URLRequest(url: url), requestDate: base, responseDate: base)
                if i % 7 != 0 { bodyBytes += size; stored += 1; files += 1 }
                if i % 7 == 3 { files += 1 }  // Vary: the URL's variant index beside its variant
            }
            return (bodyBytes, stored, files)
        }
        let writeSeconds = Date().timeIntervalSince(start)
        let usage = cache.currentDiskUsage
        var allocated = 0
        var logical = 0
        for name in dir.entryFiles {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir.url.appendingPathComponent(name).path)
            logical += (attributes[.size] as? Int) ?? 0
        }
        for name in dir.entryFiles {
            var info = stat()
            if stat(dir.url.appendingPathComponent(name).path, &info) == 0 { allocated += Int(info.st_blocks) * 512 }
        }
        #expect(dir.entryFiles.count == files)
        #expect(usage <= cache.diskCapacity)
        #expect(logical >= bodyBytes)
        print("HTTPImageCache \(count) mixed: \(stored) stored, bodies \(bodyBytes) B, files \(logical) B "
              + "(overhead \(logical - bodyBytes) B = \((logical - bodyBytes) / max(1, stored)) B/entry), "
              + "counted usage \(usage) B (4 KiB blocks), allocated on disk \(allocated) B, write time \(String(format: "%.2f", writeSeconds)) s")
    }

    /// A 30 KB hit (a typical thumbnail): both caches answer fresh with the stored bytes and `plan` serves them
    /// with a generated Age; the memory layer keeps the body after the first read, a disk-only cache keeps none.
    /// (How long such a hit takes is measured, not asserted: Docs/HTTPCache.md names the run of its figures.)
    @Test func aHitOfA30KBImageIsKeptInTheMemoryLayerOnceRead() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let url = "http://127.0.0.1:8080/latency.jpg"
        let body = F.body(30, count: 30_000)
        let writer = HTTPImageCache(directory: dir.url)
        try put(writer, url, body, headers: F.headers(["Cache-Control": "max-age=600"]))
        let memoryCache = HTTPImageCache(directory: dir.url)
        let diskOnly = HTTPImageCache(directory: dir.url, memoryCapacity: 0)
        let now = t0.addingTimeInterval(30)  // stored at t0 with max-age=600: fresh
        #expect(memoryCache.currentMemoryUsage == 0)
        for cache in [memoryCache, diskOnly] {
            guard case .fresh(let stored) = cache.lookup(for: F.request(url), now: now) else {
                Issue.record("not a fresh hit (memory capacity \(cache.memoryCapacity))")
                continue
            }
            #expect(stored.data == body)
            guard case .serveFromCache(let served) = cache.plan(for: F.request(url), useURLCache: true, now: now) else {
                Issue.record("not served from the cache (memory capacity \(cache.memoryCapacity))")
                continue
            }
            #expect(served.data == body)
            #expect(served.response.value(forHTTPHeaderField: "Age") != nil)
        }
        #expect(memoryCache.currentMemoryUsage >= body.count)
        #expect(diskOnly.currentMemoryUsage == 0)
    }
}

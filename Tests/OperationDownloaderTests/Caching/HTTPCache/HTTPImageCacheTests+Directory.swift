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
    // MARK: Capacity

    @Test func trimKeepsUsageUnderCapacityAndEvictsLeastRecentlyUsed() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        // 16 blocks of 4 KiB; each entry (3000-byte body + metadata) takes one block.
        let capacity = 16 * 4096
        let cache = HTTPImageCache(directory: dir.url, diskCapacity: capacity, memoryCapacity: 0)
        func url(_ i: Int) -> String { "http://127.0.0.1:8080/lru/\(i).png" }
        for i in 0..<12 {
            try put(cache, url(i), F.body(i, count: 3000), headers: F.headers(["Cache-Control": "max-age=600"]))
        }
        #expect(dir.entryFiles.count == 12)
        // Give the entries distinct, old modification times in insertion order, then use entries 0 and 1.
        for i in 0..<12 {
            let name = HTTPCacheKey.fileName(for: try #require(HTTPCacheKey.key(for: F.url(url(i)))))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: TimeInterval(-10_000 + i))],
                                                  ofItemAtPath: dir.url.appendingPathComponent(name).path)
        }
        #expect(cache.cachedResponse(for: F.request(url(0))) != nil)
        #expect(cache.cachedResponse(for: F.request(url(1))) != nil)

        for i in 12..<17 {
            try put(cache, url(i), F.body(i, count: 3000), headers: F.headers(["Cache-Control": "max-age=600"]))
        }
        #expect(cache.currentDiskUsage <= capacity)
        #expect(cache.currentDiskUsage <= capacity * 80 / 100)
        let reader = HTTPImageCache(directory: dir.url, memoryCapacity: 0)
        let present = (0..<17).filter { reader.cachedResponse(for: F.request(url($0))) != nil }
        // Recently used 0 and 1 and the newest entries survive; the least recently used (2, 3, ...) went first.
        #expect(present.contains(0) && present.contains(1))
        #expect(present.contains(16) && present.contains(15))
        #expect(!present.contains(2) && !present.contains(3))
        let evicted = Set(0..<17).subtracting(present)
        #expect(evicted.allSatisfy { (2..<12).contains($0) }, "evicted \(evicted.sorted())")
    }

    @Test func concurrentEntriesIntoASmallCacheStayUnderCapacity() async throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let capacity = 512 * 1024
        // Two caches (as two downloaders or processes) writing 400 entries (about 2 MB) into one directory
        // from several threads.
        let caches = [HTTPImageCache(directory: dir.url, diskCapacity: capacity),
                      HTTPImageCache(directory: dir.url, diskCapacity: capacity, memoryCapacity: 0)]
        let response = try F.response("http://127.0.0.1:8080/", headers: F.headers(["Cache-Control": "max-age=600"]))
        let wrong = HTTPCacheTestCounter()
        await offCooperativePool { DispatchQueue.concurrentPerform(iterations: 400) { i in
            let request = F.request("http://127.0.0.1:8080/many/\(i).png")
            let body = Data(repeating: UInt8(i % 256), count: 1000 + (i * 7919) % 8000)
            caches[i % 2].store(response, data: body, for: request, requestDate: Date(), responseDate: Date())
            // Read back something written earlier: either gone (trimmed) or exactly its bytes.
            let earlier = i / 2
            if let hit = caches[(i + 1) % 2].cachedResponse(for: F.request("http://127.0.0.1:8080/many/\(earlier).png")),
               hit.data != Data(repeating: UInt8(earlier % 256), count: 1000 + (earlier * 7919) % 8000) {
                wrong.increment()
            }
        } }
        #expect(wrong.value == 0)
        // Each cache trims on its own running total, so together they may overshoot by what the other wrote
        // since its last scan; the next trim brings the directory back under the capacity.
        caches[0].trim()
        let usage = caches[0].currentDiskUsage
        #expect(usage <= capacity)
        #expect(usage > capacity / 2)
        #expect(dir.entryFiles.count < 400)
    }

    @Test func bodiesOverATenthOfTheCapacityAreNotStored() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url, diskCapacity: 100_000, memoryCapacity: 0)
        try put(cache, "http://127.0.0.1:8080/big.png", F.body(1, count: 10_001), headers: F.headers(["Cache-Control": "max-age=60"]))
        try put(cache, "http://127.0.0.1:8080/ok.png", F.body(1, count: 9_000), headers: F.headers(["Cache-Control": "max-age=60"]))
        #expect(dir.entryFiles.count == 1)
    }

    @Test func memoryLayerStaysWithinItsCapacity() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url, memoryCapacity: 100_000)
        for i in 0..<50 {
            try put(cache, "http://127.0.0.1:8080/m/\(i).png", F.body(i, count: 5000), headers: F.headers(["Cache-Control": "max-age=60"]))
        }
        #expect(cache.currentMemoryUsage <= 100_000)
        #expect(cache.currentMemoryUsage > 0)
        // Evicted from memory, still on disk.
        #expect(cache.cachedResponse(for: F.request("http://127.0.0.1:8080/m/0.png"))?.data == F.body(0, count: 5000))
    }

    // MARK: Damaged directories

    @Test func garbageTruncatedAndForeignFilesAreDiscardedNeverServed() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let cache = HTTPImageCache(directory: dir.url, memoryCapacity: 0)
        func path(_ url: String) throws -> String {
            dir.url.appendingPathComponent(HTTPCacheKey.fileName(for: try #require(HTTPCacheKey.key(for: F.url(url))))).path
        }
        let fresh = F.headers(["Cache-Control": "max-age=600"])
        let valid = "http://127.0.0.1:8080/valid.png"
        try put(cache, valid, F.body(1, count: 3000), headers: fresh)
        let validBytes = try Data(contentsOf: URL(fileURLWithPath: try path(valid)))

        var damaged: [String: Data] = [:]
        damaged["http://h/garbage.png"] = F.body(99, count: 5000)
        damaged["http://h/empty.png"] = Data()
        damaged["http://h/magic-only.png"] = Data("ODHC".utf8)
        damaged["http://h/truncated.png"] = validBytes.prefix(validBytes.count - 10)
        damaged["http://h/truncated-header.png"] = validBytes.prefix(30)
        damaged["http://h/too-long.png"] = validBytes + Data([0])
        var flippedBody = validBytes; flippedBody[flippedBody.count - 1] ^= 0x40
        damaged["http://h/flipped-body.png"] = flippedBody
        var flippedHeader = validBytes; flippedHeader[9] ^= 0x01  // status code
        damaged["http://h/flipped-header.png"] = flippedHeader
        var futureVersion = validBytes; futureVersion[4] = 9
        damaged["http://h/future-version.png"] = futureVersion
        var hugeLength = validBytes
        for i in 16..<24 { hugeLength[i] = 0xff }
        damaged["http://h/huge-length.png"] = hugeLength
        damaged["http://h/foreign-entry.png"] = validBytes  // a valid entry, but for another key
        for (url, bytes) in damaged {
            try bytes.write(to: URL(fileURLWithPath: try path(url)))
        }
        // A directory under an entry name, and foreign files with other names.
        try FileManager.default.createDirectory(atPath: try path("http://h/directory.png"), withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: dir.url.appendingPathComponent("README.txt"))
        try Data("x".utf8).write(to: dir.url.appendingPathComponent(String(repeating: "z", count: 64) + ".odhc"))

        for url in damaged.keys.sorted() + ["http://h/directory.png"] {
            #expect(cache.cachedResponse(for: F.request(url)) == nil, "\(url)")
            #expect(cache.lookup(for: F.request(url)).isMiss, "\(url)")
        }
        for url in damaged.keys.sorted() where url != "http://h/future-version.png" {
            #expect(!FileManager.default.fileExists(atPath: try path(url)), "\(url) should have been removed")
        }
        // An entry of another format version may belong to another version of the package: left alone.
        #expect(FileManager.default.fileExists(atPath: try path("http://h/future-version.png")))
        #expect(FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("README.txt").path))
        #expect(cache.cachedResponse(for: F.request(valid))?.data == F.body(1, count: 3000))

        // The cache keeps working: the damaged URLs can be stored again, and trimming ignores foreign files.
        try put(cache, "http://h/garbage.png", F.body(2, count: 100), headers: fresh)
        #expect(cache.cachedResponse(for: F.request("http://h/garbage.png"))?.data == F.body(2, count: 100))
        cache.trim()
        cache.removeAll()
        #expect(dir.entryFiles.isEmpty)
        #expect(FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("README.txt").path))
    }

    @Test func randomDamageIsNeverServed() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url, memoryCapacity: 0)
        let url = "http://127.0.0.1:8080/mutate.png"
        let body = F.body(77, count: 700)
        try put(cache, url, body, headers: F.headers(["Cache-Control": "max-age=600", "ETag": "\"m\""]))
        let file = dir.url.appendingPathComponent(HTTPCacheKey.fileName(for: try #require(HTTPCacheKey.key(for: F.url(url)))))
        let original = try Data(contentsOf: file)
        var rng = HTTPCacheTestRandom(seed: 42)
        for round in 0..<300 {
            var mutated = original
            switch round % 3 {
            case 0:
                let index = Int(rng.next() % UInt64(mutated.count))
                mutated[index] ^= UInt8(1 << (rng.next() % 8))
            case 1:
                mutated = mutated.prefix(Int(rng.next() % UInt64(mutated.count)))
            default:
                let index = Int(rng.next() % UInt64(mutated.count))
                mutated.insert(UInt8(truncatingIfNeeded: rng.next()), at: index)
            }
            try mutated.write(to: file)
            if let hit = cache.cachedResponse(for: F.request(url)) {
                // Only a mutation that left the entry valid may be served, and then it must be the original.
                #expect(hit.data == body, "round \(round)")
            }
        }
    }

    @Test func unwritableDirectoryDegradesToNoCachingWithOneWarning() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        // A path under a regular file can never be a directory (permission bits do not stop root).
        let file = dir.url.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let cache = HTTPImageCache(directory: file.appendingPathComponent("cache"))
        let warnings = HTTPCacheTestCounter()
        cache.warningHandler = { _ in warnings.increment() }
        for i in 0..<3 {
            try put(cache, "http://127.0.0.1:8080/u\(i).png", F.body(i, count: 100), headers: F.headers(["Cache-Control": "max-age=60"]))
        }
        #expect(warnings.value == 1)
        #expect(cache.cachedResponse(for: F.request("http://127.0.0.1:8080/u0.png")) == nil)
        #expect(cache.lookup(for: F.request("http://127.0.0.1:8080/u0.png")).isMiss)
        #expect(cache.currentDiskUsage == 0)
        cache.removeAll()
    }

    @Test func removedDirectoryIsCreatedAgain() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let warnings = HTTPCacheTestCounter()
        cache.warningHandler = { _ in warnings.increment() }
        try put(cache, "http://127.0.0.1:8080/d1.png", F.body(1, count: 100), headers: F.headers(["Cache-Control": "max-age=60"]))
        try FileManager.default.removeItem(at: dir.url)
        try put(cache, "http://127.0.0.1:8080/d2.png", F.body(2, count: 100), headers: F.headers(["Cache-Control": "max-age=60"]))
        #expect(dir.entryFiles.count == 1)
        #expect(warnings.value == 0)
        // The first entry went with the directory; the memory layer notices the file is gone.
        #expect(cache.cachedResponse(for: F.request("http://127.0.0.1:8080/d1.png")) == nil)
    }

    @Test func abandonedTemporaryFilesAreRemovedByTrim() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let old = dir.url.appendingPathComponent(HTTPCacheDirectory.temporaryPrefix + "old")
        let recent = dir.url.appendingPathComponent(HTTPCacheDirectory.temporaryPrefix + "recent")
        try Data(count: 100).write(to: old)
        try Data(count: 100).write(to: recent)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: old.path)
        HTTPImageCache(directory: dir.url).trim()
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(FileManager.default.fileExists(atPath: recent.path))
    }

    @Test func defaultDirectoryIsUnderTheUserCacheDirectory() {
        let path = HTTPImageCache.defaultDirectory().path
        #expect(path.hasSuffix("/OperationDownloader/http"))
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            #expect(path.hasPrefix(xdg))
        } else {
            #expect(path.contains("/.cache/") || path.contains("/Caches/"))
        }
    }
}

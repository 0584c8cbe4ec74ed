import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// Many processes writing one cache directory at once (`imagedl --http-cache DIR --http-cache-size`): the usage
/// count they share keeps the directory within its capacity the whole time.
@Suite(.requires(.imagedl)) struct HTTPCacheDirectoryFleetTests {
    let server = FixtureServer.shared

    /// Bytes the entry files in `directory` take now (4 KiB blocks, as the cache counts them).
    static func usage(_ directory: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter(HTTPCacheDirectory.isEntryName).reduce(0) { total, name in
            var info = stat()
            guard stat(directory.appendingPathComponent(name).path, &info) == 0 else { return total }
            return total + HTTPCacheDirectory.diskCost(ofFileSize: Int(info.st_size))
        }
    }

    /// 8 processes × 24 URLs into a directory that holds 16 entries: sampled while they run, the directory never
    /// holds more than its capacity plus one entry, and it ends within its capacity.
    @Test func eightProcessesNeverExceedTheCapacityByMoreThanOneEntry() async throws {
        let directory = TemporaryCacheDirectory(); defer { directory.remove() }
        let capacity = 128 * 1024
        // image.webp (5068 bytes) with its metadata: two 4 KiB blocks per entry.
        let entry = 2 * HTTPCacheDirectory.blockSize
        let tag = newTag()
        let fleet = try (0..<8).map { member in
            let urls = (0..<24).map { server.url("/images/image.webp?cc=max-age%3D600&p=\(member)&n=\($0)&tag=\(tag)").absoluteString }
            return try ImagedlProcess(["--http-cache", directory.url.path, "--http-cache-size", String(capacity), "--concurrency", "4"] + urls)
        }
        // Sampled on a thread of its own until the last process has ended (bounded as well).
        let running = LockedBox(true)
        let peak = LockedBox(0)
        let sampler = Thread {
            for _ in 0..<200_000 where running.value {
                peak.value = max(peak.value, Self.usage(directory.url))
                usleep(500)
            }
        }
        sampler.start()
        var outcomes: [ImagedlProcess.Outcome] = []
        for member in fleet { outcomes.append(await member.finish()) }
        running.value = false
        for outcome in outcomes {
            #expect(outcome.status == 0 && outcome.records.count == 24, "\(outcome.standardError)")
        }
        #expect(server.stats(tag: tag).count == 8 * 24)
        let final = Self.usage(directory.url)
        #expect(peak.value <= capacity + entry, "peak \(peak.value) bytes, capacity \(capacity)")
        #expect(final <= capacity && final > capacity / 2, "final \(final) bytes")
    }

    /// `imagedl` answers a stale-while-revalidate entry at once ("stale") and ends only after the revalidation it
    /// started behind the answer (held at the server here) has refreshed the entry: the next run is a fresh hit.
    @Test func imagedlEndsAfterItsBackgroundRevalidations() async throws {
        let directory = TemporaryCacheDirectory(); defer { directory.remove() }
        let tag = newTag()
        let hold = "imagedl-swr-\(tag)"
        defer { server.release(hold) }
        let url = server.cacheURL(tag: tag, [
            CacheScriptStep(headers: [("Cache-Control", "max-age=60, stale-while-revalidate=3600"), ("Age", "120"),
                                      ("ETag", "\"w1\""), ("Content-Type", "image/png")], file: "tiny.png"),
            CacheScriptStep(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"w1\"")], hold: hold),
        ]).absoluteString
        let first = try await ImagedlProcess(["--http-cache", directory.url.path, url]).finish()
        #expect(first.status == 0 && first.records.first?["cache"] is NSNull)
        let second = try ImagedlProcess(["--http-cache", directory.url.path, url])
        let log = await server.awaitRequests(tag: tag, count: 2)
        #expect(log.last?.headers["if-none-match"] == "\"w1\"")
        server.release(hold)
        let answered = await second.finish()
        #expect(answered.status == 0 && (answered.records.first?["cache"] as? String) == "stale", "\(answered.standardError)")
        let third = try await ImagedlProcess(["--http-cache", directory.url.path, url]).finish()
        #expect((third.records.first?["cache"] as? String) == "hit", "\(third.standardError)")
        #expect(server.stats(tag: tag).count == 2)
    }
}

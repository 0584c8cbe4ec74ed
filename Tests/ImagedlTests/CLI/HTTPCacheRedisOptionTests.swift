import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `--http-cache redis://...`: parsed as the shared cache, never as a folder; other schemes are usage errors;
/// single-flight waits are counted in the summary and the JSON.
@Suite(.offThePool) struct HTTPCacheRedisOptionTests {
    @Test func redisURLIsTheSharedCache() throws {
        let options = try ParsedArguments.download(["--http-cache", "redis://alice:pw@10.0.0.7:6380/2", "http://a.test/1.png"])
        #expect(options.httpCacheRedisURL?.absoluteString == "redis://alice:pw@10.0.0.7:6380/2")
        #expect(options.httpCacheDirectory == nil && options.usesHTTPCache)
        // Twice, a folder and a URL: two tiers, the first given nearest.
        let tiers = try ParsedArguments.download(["--http-cache", "dir", "--http-cache", "redis://h:1/0", "http://a.test/1.png"])
        #expect(tiers.httpCacheDirectory == "dir" && tiers.httpCacheRedisURL?.absoluteString == "redis://h:1/0")
        #expect(!tiers.httpCacheRedisIsNearest)
        let redisFirst = try ParsedArguments.download(["--http-cache", "redis://h:1/0", "--http-cache", "dir", "http://a.test/1.png"])
        #expect(redisFirst.httpCacheDirectory == "dir" && redisFirst.httpCacheRedisIsNearest)
        // Two of a kind, or a size without a folder, are usage errors.
        #expect(ParsedArguments.usageError(["--http-cache", "a", "--http-cache", "b", "http://a.test/1.png"])?.contains("two folders") == true)
        #expect(ParsedArguments.usageError(["--http-cache", "redis://h/0", "--http-cache", "redis://g/0", "http://a.test/1.png"])?
            .contains("two Redis URLs") == true)
        #expect(ParsedArguments.usageError(["--http-cache", "redis://h/0", "--http-cache-size", "1M", "http://a.test/1.png"])
            == "--http-cache-size needs --http-cache DIR")
        let rediss = try ParsedArguments.download(["--http-cache=rediss://h:6380", "http://a.test/1.png"])
        #expect(rediss.httpCacheRedisURL?.scheme == "rediss")
    }

    @Test(arguments: ["memcached://127.0.0.1:11211", "http://cache.test/", "s3://bucket/prefix", "Redis+x://h"])
    func otherSchemesAreUsageErrors(value: String) {
        let message = ParsedArguments.usageError(["--http-cache", value, "http://a.test/1.png"])
        #expect(message?.hasPrefix("--http-cache: unsupported scheme") == true, "\(message ?? "parsed")")
        #expect(Imagedl.run(arguments: ["--http-cache", value, "http://a.test/1.png"]) == .usage)
    }

    @Test func cacheSizes() throws {
        #expect(try ParsedArguments.download(["--http-cache", "d", "--http-cache-size", "500M", "http://a.test/1.png"]).httpCacheSize == 500 << 20)
        #expect(try ParsedArguments.download(["--http-cache", "d", "--http-cache-size", "2g", "http://a.test/1.png"]).httpCacheSize == 2 << 30)
        #expect(try ParsedArguments.download(["--http-cache", "d", "--http-cache-size", "65536", "http://a.test/1.png"]).httpCacheSize == 65536)
        for bad in ["0", "1K", "-5M", "lots", "9999999999999999999G", ""] {
            #expect(ParsedArguments.usageError(["--http-cache", "d", "--http-cache-size", bad, "http://a.test/1.png"])?
                .hasPrefix("--http-cache-size needs a size") == true, "\(bad)")
        }
    }

    @Test func malformedRedisURLIsAUsageError() {
        #expect(ParsedArguments.usageError(["--http-cache", "redis://", "http://a.test/1.png"])?.contains("is not a Redis URL") == true)
        // The password never shows in the message.
        let message = ParsedArguments.usageError(["--http-cache", "redis://u:hunter2@h:99999/0", "http://a.test/1.png"])
        #expect(message?.contains("is not a Redis URL") == true && message?.contains("hunter2") == false, "\(message ?? "parsed")")
    }

    /// Sentinel and Cluster URLs name several hosts, which Foundation's URL cannot hold: the option keeps them
    /// percent-encoded in the host, and the cache reads them back.
    @Test func sentinelAndClusterURLsAreTheSharedCache() throws {
        let sentinel = try ParsedArguments.download(["--http-cache", "redis-sentinel://:pw@10.0.0.1:26379,10.0.0.2:26380/mymaster/2", "http://a.test/1.png"])
        let url = try #require(sentinel.httpCacheRedisURL)
        #expect(url.scheme == "redis-sentinel" && url.host == "10.0.0.1:26379,10.0.0.2:26380" && url.password == "pw")
        let cluster = try ParsedArguments.download(["--http-cache", "redis-cluster://127.0.0.1:7000,127.0.0.1:7001", "http://a.test/1.png"])
        #expect(cluster.httpCacheRedisURL?.scheme == "redis-cluster" && cluster.httpCacheDirectory == nil)
        #expect(ParsedArguments.usageError(["--http-cache", "redis-sentinel://h:1", "http://a.test/1.png"])?.contains("is not a Redis URL") == true)
    }

    /// The URL from a file (its first non-blank line) or from OD_REDIS_URL: no password on the command line.
    @Test func urlFromAFileOrTheEnvironment() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("redis-url-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try "\n  redis://:s3cret@10.0.0.9:6390/1  \n".write(to: file, atomically: true, encoding: .utf8)
        let fromFile = try ParsedArguments.download(["--http-cache-url-file", file.path, "http://a.test/1.png"])
        #expect(fromFile.httpCacheRedisURL?.absoluteString == "redis://:s3cret@10.0.0.9:6390/1")
        #expect(ParsedArguments.usageError(["--http-cache-url-file", file.path + ".missing", "http://a.test/1.png"])?
            .hasPrefix("--http-cache-url-file: cannot read") == true)
        // With a folder: two tiers, the folder nearest; with --http-cache redis://… too: two URLs.
        let tiers = try ParsedArguments.download(["--http-cache", "dir", "--http-cache-url-file", file.path, "http://a.test/1.png"])
        #expect(tiers.httpCacheDirectory == "dir" && tiers.httpCacheRedisURL?.port == 6390 && !tiers.httpCacheRedisIsNearest)
        #expect(ParsedArguments.usageError(["--http-cache", "redis://h/0", "--http-cache-url-file", file.path, "http://a.test/1.png"])?
            .contains("two Redis URLs") == true)

        let environment = ["OD_REDIS_URL": "redis-cluster://:pw@127.0.0.1:7000"]
        guard case .download(let fromEnvironment) = try ArgumentParser.parse(["http://a.test/1.png"], environment: environment) else {
            Issue.record("not a download")
            return
        }
        #expect(fromEnvironment.httpCacheRedisURL?.scheme == "redis-cluster")
        // The command line wins.
        guard case .download(let folder) = try ArgumentParser.parse(["--http-cache", "dir", "http://a.test/1.png"], environment: environment) else {
            Issue.record("not a download")
            return
        }
        #expect(folder.httpCacheDirectory == "dir" && folder.httpCacheRedisURL == nil)
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["http://a.test/1.png"], environment: ["OD_REDIS_URL": "memcached://h"]) }
    }

    @Test func summaryAndJSONCountSharedWaits() throws {
        func record(_ index: Int, waited: Bool, cache: DownloadRecord.CacheResult?) throws -> DownloadRecord {
            var record = DownloadRecord(index: index, url: try #require(URL(string: "http://h.test/\(index).png")))
            record.state = .succeeded
            record.bytes = 10
            record.cacheResult = cache
            record.waitedForSharedFetch = waited
            return record
        }
        let records = [try record(0, waited: true, cache: .hit), try record(1, waited: true, cache: .hit), try record(2, waited: false, cache: nil)]
        #expect(SummaryTable.render(records, columns: 200).last
            == "3 of 3 downloaded, 30 B in all; cache: 0 memory, 2 HTTP hits, 0 stale, 0 revalidated; 2 waited for another process")
        #expect(records[0].json.serialized().contains("\"shared_wait\":true"))
        #expect(records[2].json.serialized().contains("\"shared_wait\":false"))
        var lines: [String] = []
        let streaming = StreamingReporter(preview: false) { lines.append($0) }
        for record in records { streaming.finished(record) }
        streaming.end([], interrupted: false)
        // The --input run's last line counts the same as the table's.
        #expect(lines.last == "\n3 of 3 downloaded, 30 B in all; cache: 0 memory, 2 HTTP hits, 0 stale, 0 revalidated; 2 waited for another process\n")
    }
}

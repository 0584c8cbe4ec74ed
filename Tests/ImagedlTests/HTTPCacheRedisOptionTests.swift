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
            .contains("two redis:// URLs") == true)
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
        #expect(ParsedArguments.usageError(["--http-cache", "redis://", "http://a.test/1.png"])?.contains("is not a redis://") == true)
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
            == "3 of 3 downloaded, 30 B in all; HTTP cache: 2 hits, 0 stale, 0 revalidated; 2 waited for another process")
        #expect(records[0].json.serialized().contains("\"shared_wait\":true"))
        #expect(records[2].json.serialized().contains("\"shared_wait\":false"))
        var lines: [String] = []
        let streaming = StreamingReporter(preview: false) { lines.append($0) }
        for record in records { streaming.finished(record) }
        streaming.end([], interrupted: false)
        #expect(lines.last == "\n3 of 3 downloaded, 30 B in all; 2 waited for another process\n")
    }
}

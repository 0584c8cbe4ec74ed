import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// The HTTP cache's own events through the log hook and the sink: a Redis outage (one warning with its metadata,
/// errors by kind, the breaker gauge) and its end (an info message, the gauge back to 0); a directory that cannot
/// be written (one warning, every failed store counted). With a log handler, `warningHandler` hears nothing.
@Suite struct CacheLogHookTests {
    typealias F = HTTPCacheFixtures
    typealias N = ImageDownloaderMetricName

    func store(_ cache: HTTPImageCache, _ url: String, _ body: Data) throws {
        let response = try F.response(url, headers: F.headers(date: Date(), ["Cache-Control": "max-age=600"]))
        cache.store(response, data: body, for: F.request(url), requestDate: Date(), responseDate: Date())
    }

    @Test(.requires(.redisServer)) func aRedisOutageAndItsEnd() async throws {
        let first = try await RedisServer.start()
        let port = first.port
        var options = RedisCacheFixtures.options()
        // Any call after a millisecond tries the server again: the restart below takes longer than that.
        options.retryInterval = 0.001
        options.maximumRetryInterval = 0.001
        let cache = try HTTPImageCache(redis: first.url(), options: options)
        let sink = PrometheusMetrics()
        let log = RecordingLogHandler(logLevel: .info)
        let warnings = WarningLog()
        cache.metricsSink = sink
        cache.logHandler = log
        cache.warningHandler = { warnings.append($0) }
        try store(cache, "http://images.test/1.png", F.body(1, count: 10))
        first.stop()
        try store(cache, "http://images.test/2.png", F.body(2, count: 10))
        #expect(cache.cachedResponse(for: F.request("http://images.test/3.png")) == nil)
        let during = try Exposition(sink.exposition())
        #expect(during.value(N.redisBreakerOpen) == 1)
        #expect(during.series(N.redisErrors).allSatisfy { ["connect", "io"].contains($0["kind"]) })
        #expect(during.total(N.redisErrors) >= 1)
        let outage = log.all.filter { $0.level == .warning }
        #expect(outage.count == 1)
        #expect(outage.first?.message.contains("127.0.0.1:\(port) is unavailable") == true)
        #expect(outage.first?.metadata["redis.endpoint"] == "127.0.0.1:\(port)")
        #expect(outage.first?.metadata["error"]?.isEmpty == false && outage.first?.metadata["retry_in"] != nil)
        #expect(warnings.all.isEmpty, "the log handler takes the warnings")

        let second = try await RedisServer.start(port: port)
        defer { second.stop() }
        try store(cache, "http://images.test/4.png", F.body(4, count: 10))
        let after = try Exposition(sink.exposition())
        #expect(after.value(N.redisBreakerOpen) == 0)
        #expect(log.all.filter { $0.level == .info && $0.message.contains("is back") }.count == 1)
        #expect(cache.cachedResponse(for: F.request("http://images.test/4.png"))?.data == F.body(4, count: 10))
    }

    @Test func anUnwritableDirectoryWarnsOnceAndCountsEveryFailedStore() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let file = dir.url.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let cache = HTTPImageCache(directory: file.appendingPathComponent("cache"))
        let sink = PrometheusMetrics()
        let log = RecordingLogHandler()
        cache.metricsSink = sink
        cache.logHandler = log
        for i in 0..<3 { try store(cache, "http://127.0.0.1:8080/u\(i).png", F.body(i, count: 100)) }
        cache.waitForQueuedWrites()
        #expect(log.all.count == 1)
        #expect(log.all.first?.level == .warning && log.all.first?.metadata["directory"] == file.appendingPathComponent("cache").path)
        #expect(try Exposition(sink.exposition()).value(N.httpCacheWriteFailures, ["storage": "directory"]) == 3)
    }

    /// A downloader hands its sink and log handler to its HTTP cache, unless the cache has its own.
    @Test func aDownloaderLendsItsHooksToItsCache() {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let mine = PrometheusMetrics(), theirs = PrometheusMetrics()
        let cache = HTTPImageCache(directory: dir.url)
        var configuration = ImageDownloaderConfiguration()
        configuration.httpCache = cache
        configuration.metricsSink = mine
        configuration.logHandler = RecordingLogHandler()
        _ = ImageDownloader(configuration: configuration)
        #expect(cache.metricsSink as? PrometheusMetrics === mine && cache.logHandler != nil)
        let owned = HTTPImageCache(directory: dir.url)
        owned.metricsSink = theirs
        configuration.httpCache = owned
        _ = ImageDownloader(configuration: configuration)
        #expect(owned.metricsSink as? PrometheusMetrics === theirs)
    }
}

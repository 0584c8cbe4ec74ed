import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Decoding
import Testing
import TestRequirements
@testable import OperationDownloader

/// Every metric of Docs/Observability.md observed in one scripted scenario, with exact counts, read back from the
/// exposition text (and checked by promtool): an HTTP cache miss, a hit, a revalidation, a memory-cache hit, a
/// retry, a decode that waits for the budget, a Redis outage, a wait for another download's fetch, coalesced
/// callers, a prefetch, a cancel and a failure. The transport is scripted and the clock manual; Redis is a real
/// server of the test's own (and a port where none listens).
@Suite(.requires(.redisServer)) struct ObservabilityScenarioTests {
    private let png = ScriptedHarness.fixture("image.png")

    private struct Rig {
        let downloader: ImageDownloader
        let transport: ScriptedTransport
        let clock: ManualClock
        let sink: PrometheusMetrics
        let log: RecordingLogHandler
        let budget: ImageDecodingBudget

        func download(_ name: String, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil) -> (AsyncRecorder, ImageDownloadToken?) {
            let recorder = AsyncRecorder()
            let token = downloader.downloadImage(
                ScriptedHarness.url(name), options: options, context: context, progress: nil, completed: recorder.completed)
            return (recorder, token)
        }
    }

    private func serve(_ transfer: ScriptedTransfer, _ headers: [String: String] = [:]) {
        var fields = ["Content-Type": "image/png", "Content-Length": "\(png.count)"]
        fields.merge(headers) { $1 }
        transfer.respond(headers: fields)
        transfer.send(png, inChunks: 2)
        transfer.complete()
    }

    @Test func everyMetricWithExactCounts() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let directory = TemporaryCacheDirectory()
        defer { directory.remove() }
        let sink = PrometheusMetrics()
        let log = RecordingLogHandler(logLevel: .debug)
        let budget = ImageDecodingBudget(limitBytes: 16 << 20)
        let (monitor, clock) = makeManualMonitor()
        var configuration = ImageDownloaderConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "scenario.callbacks")
        configuration.imageCache = AutoPurgingImageCache()
        configuration.httpCache = HTTPImageCache(directory: directory.url)
        configuration.metricsSink = sink
        configuration.logHandler = log
        configuration.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0)
        let transport = ScriptedTransport()
        let rig = Rig(
            downloader: ImageDownloader(configuration: configuration, deadlineMonitor: monitor, transport: transport, decodingBudget: budget),
            transport: transport, clock: clock, sink: sink, log: log, budget: budget)
        let cached: ImageDownloaderOptions = [.useURLCache]
        var next = 0
        func transfer() async throws -> ScriptedTransfer {
            defer { next += 1 }
            return try #require(await transport.transfer(next))
        }

        // 1. A miss in the directory cache, 2. a hit (another caller's entry in the memory cache: its own
        // identifier), 3. a memory-cache hit.
        let (miss, _) = rig.download("u1.png", options: cached)
        serve(try await transfer(), ["Cache-Control": "max-age=600"])
        await miss.completion()
        let (hit, _) = rig.download("u1.png", options: cached, context: ImageDownloaderContext(cacheIdentifier: "h"))
        await hit.completion()
        let (memory, memoryToken) = rig.download("u1.png", options: cached)
        #expect(memoryToken == nil && memory.final?.image != nil, "answered at once from the memory cache")

        // 4. A revalidation: stored with no-cache and an ETag, then a conditional request answered 304.
        let (stored, _) = rig.download("u2.png", options: cached)
        serve(try await transfer(), ["Cache-Control": "no-cache", "ETag": "\"v1\""])
        await stored.completion()
        let (revalidated, _) = rig.download("u2.png", options: cached, context: ImageDownloaderContext(cacheIdentifier: "r"))
        let conditional = try await transfer()
        #expect(conditional.request.urlRequest.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        conditional.respond(status: 304, headers: ["ETag": "\"v1\"", "Cache-Control": "no-cache"])
        conditional.complete()
        await revalidated.completion()

        // 5. A retry: a 503, then the image.
        let (retried, _) = rig.download("u3.png")
        try await transfer().respond(status: 503, headers: ["Content-Type": "text/plain"])
        clock.advance(by: 0)
        serve(try await transfer())
        await retried.completion()

        // 6. A decode that waits for the decode memory budget (held whole by the test until the decode waits).
        let waiting = Watched(false)
        budget.ledger.observeWaits { waiting.withLock { $0 = true } }
        let held = try budget.reserve(budget.limitBytes)
        let (waited, _) = rig.download("u4.png")
        serve(try await transfer())
        #expect(await waiting.wait { $0 })
        held.release()
        await waited.completion()

        // 7. A Redis outage: nothing listens on the port; the download goes to the origin.
        var outageOptions = RedisCacheFixtures.options(prefix: "outage")
        outageOptions.retryInterval = 600  // one outage: no probe during the test
        let deadRedis = try HTTPImageCache(
            redis: try #require(URL(string: "redis://127.0.0.1:\(try LoopbackPort.free())/0")), options: outageOptions)
        deadRedis.metricsSink = sink
        deadRedis.logHandler = log
        let (outage, _) = rig.download("u5.png", options: cached, context: ImageDownloaderContext(httpCache: deadRedis))
        serve(try await transfer())
        await outage.completion()

        // 8. A wait for another download's fetch: two operations (two identifiers) of one URL on a shared cache.
        let liveRedis = try HTTPImageCache(redis: redis.url(), options: RedisCacheFixtures.options(prefix: "scenario"))
        let (leader, _) = rig.download("u6.png", options: cached, context: ImageDownloaderContext(cacheIdentifier: "a", httpCache: liveRedis))
        let leading = try await transfer()
        let (follower, _) = rig.download("u6.png", options: cached, context: ImageDownloaderContext(cacheIdentifier: "b", httpCache: liveRedis))
        #expect(await log.wait(for: "waiting for another download of the fleet"))
        serve(leading, ["Cache-Control": "max-age=600"])
        await leader.completion()
        await follower.completion()

        // 9. Coalesced callers, 10. a prefetch, 11. a cancelled caller, 12. a 404.
        let (first, _) = rig.download("u7.png")
        let (joined, _) = rig.download("u7.png")
        serve(try await transfer())
        await first.completion()
        await joined.completion()
        let prefetched = Watched(false)
        let prefetcher = ImagePrefetcher(downloader: rig.downloader)
        prefetcher.prefetch([ScriptedHarness.url("u8.png")]) { _, _ in prefetched.withLock { $0 = true } }
        serve(try await transfer())
        #expect(await prefetched.wait { $0 })
        let (cancelled, token) = rig.download("u9.png")
        _ = try await transfer()
        token?.cancel()
        await cancelled.completion()
        let (failed, _) = rig.download("u10.png")
        try await transfer().respond(status: 404, headers: ["Content-Type": "text/plain"])
        await failed.completion()

        for recorder in [miss, hit, memory, stored, revalidated, retried, waited, outage, leader, follower, first, joined] {
            #expect(recorder.final?.image != nil, "\(String(describing: recorder.final?.error))")
        }
        #expect(transport.transfers.count == 12)
        await awaitIdle(rig.downloader)
        try check(sink.exposition(), log: log)
    }

    private func check(_ text: String, log: RecordingLogHandler) throws {
        let m = try Exposition(text)
        typealias N = ImageDownloaderMetricName
        // Downloads, one per caller.
        #expect(m.value(N.downloads, ["result": "success", "source": "network"]) == 9)
        #expect(m.value(N.downloads, ["result": "success", "source": "http_cache"]) == 2)
        #expect(m.value(N.downloads, ["result": "success", "source": "revalidated_http_cache"]) == 1)
        #expect(m.value(N.downloads, ["result": "success", "source": "memory_cache"]) == 1)
        #expect(m.value(N.downloads, ["result": "cancelled", "source": "network"]) == 1)
        #expect(m.value(N.downloads, ["result": "failure", "source": "network"]) == 1)
        #expect(m.total(N.downloads) == 15)
        #expect(m.series(N.downloadErrors) == [["error_type": "404"]])
        #expect(m.value(N.downloadErrors, ["error_type": "404"]) == 1)
        // The HTTP cache, per download that used it.
        #expect(m.value(N.httpCacheLookups, ["storage": "directory", "result": "miss"]) == 2)
        #expect(m.value(N.httpCacheLookups, ["storage": "directory", "result": "hit"]) == 1)
        #expect(m.value(N.httpCacheLookups, ["storage": "directory", "result": "revalidated"]) == 1)
        #expect(m.value(N.httpCacheLookups, ["storage": "redis", "result": "miss"]) == 2)
        #expect(m.value(N.httpCacheLookups, ["storage": "redis", "result": "hit"]) == 1)
        #expect(m.total(N.httpCacheLookups) == 7)
        // One observation per request sent: 12 transfers.
        let requests = N.requestDuration + "_count"
        let base = ["http_request_method": "GET", "server_address": "scripted.test", "server_port": "80"]
        #expect(m.value(requests, base.merging(["http_response_status_code": "200"]) { $1 }) == 8)
        #expect(m.value(requests, base.merging(["http_response_status_code": "304"]) { $1 }) == 1)
        #expect(m.value(requests, base.merging(["http_response_status_code": "503", "error_type": "503"]) { $1 }) == 1)
        #expect(m.value(requests, base.merging(["http_response_status_code": "404", "error_type": "404"]) { $1 }) == 1)
        #expect(m.value(requests, base.merging(["error_type": "cancelled"]) { $1 }) == 1)
        #expect(m.total(requests) == 12)
        #expect(m.value(N.requestDuration + "_bucket", base.merging(["http_response_status_code": "200", "le": "+Inf"]) { $1 }) == 8)
        #expect(m.value(N.activeRequests, base) == 0)
        // Retries, waits, decodes.
        #expect(m.series(N.retries) == [["reason": "status_503"]])
        #expect(m.value(N.retries, ["reason": "status_503"]) == 1)
        #expect(m.value(N.resumedBytes) == 0)
        #expect(m.value(N.decodeDuration + "_count", ["format": "png"]) == 11)
        #expect(m.value(N.decodeBudgetWait + "_count") == 1)
        #expect(m.value(N.decodeBudgetBytes, ["state": "in_use"]) == 0)
        #expect(m.value(N.decodeBudgetBytes, ["state": "limit"]) == Double(16 << 20))
        #expect(m.series(N.decodeBudgetRefusals).isEmpty)
        #expect(m.value(N.sharedFetchWait + "_count") == 1)
        // Redis: one connection refused opens the breaker; no write failed anywhere.
        #expect(m.series(N.redisErrors) == [["kind": "connect"]])
        #expect(m.value(N.redisErrors, ["kind": "connect"]) == 1)
        #expect(m.value(N.redisBreakerOpen) == 1)
        #expect(m.series(N.httpCacheWriteFailures).isEmpty)
        // The queue, the callers, the memory cache, the prefetcher.
        #expect(m.value(N.queueDepth) == 0)
        #expect(m.value(N.queueWait + "_count") == 13)
        #expect(m.total(N.downloadDuration + "_count") == 13)
        #expect(m.value(N.downloadDuration + "_count", ["source": "network"]) == 10)
        #expect(m.value(N.coalescedCallers) == 1)
        #expect((m.value(N.memoryCacheBytes) ?? 0) > 0)
        #expect(m.value(N.prefetchedURLs, ["result": "succeeded"]) == 1)
        // Every name of the catalogue was reported (the refusal and write-failure counters appear on first use).
        let reported = Set(m.samples.map { Exposition.family(of: $0.name, types: m.types) })
        let expected = Set(N.all.map(\.name)).subtracting([N.decodeBudgetRefusals, N.httpCacheWriteFailures])
        #expect(expected.subtracting(reported).isEmpty, "not reported: \(expected.subtracting(reported).sorted())")
        // The log hook: the outage (a warning naming the server), the wait, the retry.
        #expect(log.all.contains { $0.level == .warning && $0.message.contains("is unavailable") && $0.metadata["redis.endpoint"] != nil })
        #expect(log.all.contains { $0.level == .debug && $0.message.contains("retrying") && $0.metadata["reason"] == "status_503" })
        #expect(log.all.contains { $0.level == .debug && $0.message.contains("decode memory budget") })
        #expect(log.all.allSatisfy { $0.source == "OperationDownloader" })
        // promtool where it is (always on CI: a missing one fails there, naming it).
        if Requirement.promtool.isAvailable {
            let outcome = try Promtool.check(text)
            #expect(outcome.status == 0 && outcome.output.isEmpty, "\(outcome.output)")
        } else if Requirement.requireAll {
            Requirement.recordIfMissing(.promtool)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// A fleet in one test process: `members` caches on one Redis deployment, each with its own downloader (each
/// stands for a process: its own memory layer, connections, breaker and single-flight), all downloading the
/// same URLs at once. `whenOriginHas(count, action)` runs `action` (kill a node, migrate a slot) once the origin
/// has answered `count` requests of `tag`. Bounded: the run ends within `bound` seconds or reports a hang.
struct RedisFleetRun {
    struct Outcome {
        var results: [Result<ImageDownloadResult, any Error>]
        var flights: [HTTPCacheFlights]
        var caches: [HTTPImageCache]
        var failed: Int { results.filter { (try? $0.get()) == nil }.count }
        var longestWait: TimeInterval { flights.map(\.longestWait).max() ?? 0 }
    }

    let redis: String
    let options: RedisCacheOptions
    var members = 4
    var concurrency = 4
    let warnings: WarningLog

    init(redis: String, options: RedisCacheOptions, members: Int = 4, concurrency: Int = 4, warnings: WarningLog) {
        self.redis = redis
        self.options = options
        self.members = members
        self.concurrency = concurrency
        self.warnings = warnings
    }

    /// `reusing`: the caches of an earlier run (the same "processes", their breakers and flights as they are).
    func run(_ urls: [URL], tag: String, bound: TimeInterval = 180, reusing: [HTTPImageCache]? = nil, whenOriginHas count: Int = 0,
             _ action: @escaping @Sendable () async throws -> Void = {}) async throws -> Outcome? {
        let caches = try reusing ?? (0..<members).map { _ in try HTTPImageCache(redis: redis, options: options) }
        if reusing == nil { for cache in caches { cache.warningHandler = { [warnings] in warnings.append($0) } } }
        let downloaders = caches.map { cache in
            makeDownloader {
                $0.imageCache = nil
                $0.httpCache = cache
                $0.maxConcurrentDownloads = concurrency
            }.0
        }
        let server = FixtureServer.shared
        let trigger = Task {
            if count > 0 { await server.awaitRequests(tag: tag, count: count) }
            try await action()
        }
        let results = try await within(bound) {
            await withTaskGroup(of: Result<ImageDownloadResult, any Error>.self) { group in
                for downloader in downloaders {
                    for url in urls {
                        group.addTask {
                            do { return .success(try await downloader.image(for: url, options: .useURLCache)) } catch { return .failure(error) }
                        }
                    }
                }
                var results: [Result<ImageDownloadResult, any Error>] = []
                for await result in group { results.append(result) }
                return results
            }
        }
        try await trigger.value
        guard let results else { return nil }
        return Outcome(results: results, flights: caches.compactMap(\.layer.flights), caches: caches)
    }
}

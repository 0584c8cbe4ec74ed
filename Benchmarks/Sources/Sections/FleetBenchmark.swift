import Foundation
import OperationDownloader

/// A fleet on one shared HTTP cache (issue 24): 4 `imagedl` processes download the same 500 URLs from nginx
/// at once with `--http-cache redis://…`, against 4 independent processes without a shared cache. nginx's access
/// log counts what reached the origin (goal: each URL once, 500). Then the latency of one download answered
/// from Redis, from the disk cache and from the origin, measured in this process (decode off, no memory
/// layers, so each is a real read), and the two tiers' figures (FleetBenchmark+Tiers.swift). URLs are served from
/// nginx's `/fleet/` location, which adds
/// `Cache-Control: max-age=3600`; every round uses fresh query strings and its own key prefix.
struct FleetBenchmark {
    let context: RunContext
    static let section = "Fleet"
    static let processes = 4

    func run() throws {
        let report = context.report
        let s = Self.section
        guard let redisURL = context.redisURL else {
            for key in ["fleet_origin_requests", "fleet_wall_ratio_vs_independent", "fleet_hit_ms_redis", "fleet_tier_hit_ms_directory",
                        "fleet_tier_redis_bytes_per_hit"] {
                report.skip(key, reason: "no redis-server (run.sh starts one: --redis-url)")
            }
            return
        }
        let imagedl = URL(fileURLWithPath: context.executable).deletingLastPathComponent().appendingPathComponent("imagedl").path
        guard FileManager.default.isExecutableFile(atPath: imagedl) else { throw BenchmarkError.missing("imagedl next to the Benchmarks executable") }
        let available = context.fixtures.smallCount(format: "jpg")
        guard available > 0 else { throw BenchmarkError.missing("small images (run prepare)") }
        let count = context.quick ? 100 : 500
        let rounds = context.rounds
        context.log("fleet: \(Self.processes) processes × \(count) URLs × \(rounds) rounds, shared vs independent")

        var origin = Samples(), independentOrigin = Samples(), waits = Samples()
        var fleetWall = Samples(), independentWall = Samples(), fleetCPU = Samples(), independentCPU = Samples()
        for round in 0..<rounds {
            let token = UUID().uuidString.prefix(8)
            // Alternate which variant runs first, so neither always meets a warmer machine.
            let order = round % 2 == 0 ? [true, false] : [false, true]
            for shared in order {
                let tag = "\(token)-\(shared ? "s" : "i")"
                let file = try urlFile(tag: tag, count: count, available: available)
                defer { try? FileManager.default.removeItem(at: file) }
                let logStart = accessLogSize()
                var arguments = [imagedl, "--json", "--input", file.path]
                if shared { arguments += ["--http-cache", "\(redisURL)?prefix=bench-\(tag)"] }
                let (outcomes, wall) = try runFleet(arguments)
                let records = outcomes.flatMap { $0.output.split(separator: "\n") }
                let failed = records.filter { !$0.contains("\"status\":\"ok\"") }.count
                if failed > 0 || records.count != count * Self.processes || outcomes.contains(where: { $0.status != 0 }) {
                    report.error("fleet: \(failed) of \(records.count) downloads failed (shared: \(shared))")
                }
                let requests = Double(serverRequests(containing: tag, expectedAtLeast: count, from: logStart))
                // The four processes' own CPU (wait4 rusage) per download; redis-server's and nginx's are not in it.
                let cpu = outcomes.reduce(0) { $0 + $1.cost.cpu } * 1000 / Double(count * Self.processes)
                if shared {
                    fleetCPU.add(cpu)
                    fleetWall.add(wall)
                    origin.add(requests)
                    waits.add(Double(records.filter { $0.contains("\"shared_wait\":true") }.count))
                } else {
                    independentCPU.add(cpu)
                    independentWall.add(wall)
                    independentOrigin.add(requests)
                }
            }
        }
        report.headline("fleet_origin_requests", section: s, label: "\(Self.processes) processes × \(count) URLs, shared Redis cache → requests at nginx", unit: "requests", origin)
        report.detail("fleet_independent_origin_requests", section: s, label: "\(Self.processes) independent processes × \(count) URLs → requests at nginx", unit: "requests", independentOrigin)
        report.headline("fleet_wall_s", section: s, label: "\(Self.processes) processes × \(count) URLs on the shared cache, wall time", unit: "s", fleetWall)
        report.detail("fleet_independent_wall_s", section: s, label: "\(Self.processes) independent processes × \(count) URLs, wall time", unit: "s", independentWall)
        report.headline("fleet_wall_ratio_vs_independent", section: s, label: "shared-cache fleet wall time ÷ independent processes", unit: "×", ratios(fleetWall, independentWall))
        report.detail("fleet_cpu_ms_per_download", section: s, label: "shared-cache fleet: the processes' CPU per download (decode on)", unit: "ms", fleetCPU)
        report.detail("fleet_independent_cpu_ms_per_download", section: s, label: "independent processes: CPU per download (decode on)", unit: "ms", independentCPU)
        report.detail("fleet_waits", section: s, label: "downloads that waited for another process's fetch (single-flight)", unit: "downloads", waits)

        let latency = try hitLatencies(redisURL: redisURL, count: context.quick ? 50 : 200, available: available)
        report.headline("fleet_hit_ms_redis", section: s, label: "one download served from Redis (decode off, no memory layer)", unit: "ms", latency.redis)
        report.headline("fleet_hit_ms_disk", section: s, label: "one download served from the disk cache (decode off, no memory layer)", unit: "ms", latency.disk)
        report.headline("fleet_hit_ms_origin", section: s, label: "one download from nginx on 127.0.0.1 (decode off)", unit: "ms", latency.origin)
        reportTiers(try tierFigures(redisURL: redisURL, count: context.quick ? 50 : 200, available: available))
    }

    /// Runs `arguments` as `processes` children at once; their outcomes and the wall time until the last ended.
    private func runFleet(_ arguments: [String]) throws -> ([ChildProcess.Outcome], Double) {
        let results = FleetResults(count: Self.processes)
        let start = Clock.wall()
        DispatchQueue.concurrentPerform(iterations: Self.processes) { index in
            results.set(index, Result { try ChildProcess.run(arguments, captureOutput: true) })
        }
        let wall = Clock.wall() - start
        return (try results.all.map { try $0.get() }, wall)
    }

    private func urlFile(tag: String, count: Int, available: Int) throws -> URL {
        let lines = (0..<count).map { "\(context.baseURL)/fleet/\(Fixtures.smallPath($0 % available, format: "jpg"))?fleet=\(tag)-\($0)" }
        let file = context.fixtures.directory.appendingPathComponent("fleet-\(tag).txt")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The access log's size now: a round counts only what nginx logs after it (earlier sections leave tens of
    /// MB there, which re-reading whole for every count made this section take minutes).
    private func accessLogSize() -> UInt64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: context.accessLog.path)
        return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// Access-log lines naming `token` written from byte `offset` on (nginx logs a request when it completes:
    /// bounded wait for stragglers).
    private func serverRequests(containing token: String, expectedAtLeast: Int, from offset: UInt64) -> Int {
        func count() -> Int {
            guard let handle = try? FileHandle(forReadingFrom: context.accessLog) else { return 0 }
            defer { try? handle.close() }
            guard (try? handle.seek(toOffset: offset)) != nil, let data = try? handle.readToEnd() else { return 0 }
            return String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.contains(token) }.count
        }
        for _ in 0..<100 where count() < expectedAtLeast { usleep(20_000) }
        usleep(200_000)
        return count()
    }

    // MARK: Latency of one hit

    private func hitLatencies(redisURL: String, count: Int, available: Int) throws -> (redis: Samples, disk: Samples, origin: Samples) {
        var redis = Samples(), disk = Samples(), origin = Samples()
        let folder = context.fixtures.directory.appendingPathComponent("fleet-disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        for _ in 0..<context.rounds {
            let tag = UUID().uuidString.prefix(8)
            let urls = (0..<count).compactMap { context.url("fleet/\(Fixtures.smallPath($0 % available, format: "jpg"))?latency=\(tag)-\($0)") }
            guard let redisBase = URL(string: "\(redisURL)?prefix=latency-\(tag)") else { throw BenchmarkError.failed("bad Redis URL") }
            // Fill both caches (and time the origin), then read each back through fresh instances.
            let filler: () throws -> HTTPImageCache = { try HTTPImageCache(redis: redisBase, memoryCapacity: 0) }
            origin.add(try perDownload(urls, cache: nil))
            _ = try perDownload(urls, cache: try filler())
            _ = try perDownload(urls, cache: HTTPImageCache(directory: folder, memoryCapacity: 0))
            redis.add(try perDownload(urls, cache: try filler()))
            disk.add(try perDownload(urls, cache: HTTPImageCache(directory: folder, memoryCapacity: 0)))
            HTTPImageCache(directory: folder, memoryCapacity: 0).removeAll()
            try filler().removeAll()
        }
        return (redis, disk, origin)
    }

    /// Milliseconds per download, one after another, through a fresh downloader (no memory image cache).
    func perDownload(_ urls: [URL], cache: HTTPImageCache?) throws -> Double {
        var configuration = ImageDownloaderConfiguration()
        configuration.imageCache = nil
        configuration.httpCache = cache
        let downloader = ImageDownloader(configuration: configuration)
        defer { downloader.invalidate(cancelPendingOperations: true) }
        let options: ImageDownloaderOptions = cache == nil ? [.avoidDecodeImage] : [.avoidDecodeImage, .useURLCache]
        let start = Clock.wall()
        for url in urls {
            let counter = CompletionCounter(expected: 1)
            downloader.downloadImage(url, options: options, completed: { _, data, error, finished in
                guard finished else { return }
                counter.complete(error: error.map { String(describing: $0) } ?? (data == nil ? "no data" : nil))
            })
            guard counter.wait(timeout: 60) else { throw BenchmarkError.failed("fleet latency: no answer") }
            if let error = counter.outcome.firstError { throw BenchmarkError.failed("fleet latency: \(error)") }
        }
        return (Clock.wall() - start) * 1000 / Double(urls.count)
    }
}

/// The children's outcomes, filled from concurrent threads.
private final class FleetResults: @unchecked Sendable {  // `values` guarded by `lock`
    private let lock = NSLock()
    private var values: [Result<ChildProcess.Outcome, any Error>]

    init(count: Int) {
        values = Array(repeating: .failure(BenchmarkError.failed("not run")), count: count)
    }

    func set(_ index: Int, _ value: Result<ChildProcess.Outcome, any Error>) {
        lock.withLock { values[index] = value }
    }

    var all: [Result<ChildProcess.Outcome, any Error>] { lock.withLock { values } }
}

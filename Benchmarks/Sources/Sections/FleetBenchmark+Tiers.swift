import Foundation
import OperationDownloader

/// Two tiers (`HTTPImageCache(tiers:)`: a directory on the machine in front of Redis) against Redis alone: the
/// latency of one hit from each tier, and what Redis sends for the same reads by several processes of one
/// machine (its `total_net_output_bytes`, from `INFO stats`).
extension FleetBenchmark {
    struct TierFigures {
        var memory = Samples(), directory = Samples(), redis = Samples()
        var redisAloneBytes = Samples(), tieredBytes = Samples()
    }

    /// Processes of one machine reading the same URLs, in the bytes measurement.
    static let machineProcesses = 4

    func tierFigures(redisURL: String, count: Int, available: Int) throws -> TierFigures {
        var figures = TierFigures()
        let folder = context.fixtures.directory.appendingPathComponent("fleet-tier-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        for _ in 0..<context.rounds {
            let tag = UUID().uuidString.prefix(8)
            let urls = (0..<count).compactMap { context.url("fleet/\(Fixtures.smallPath($0 % available, format: "jpg"))?tier=\(tag)-\($0)") }
            guard let redisBase = URL(string: "\(redisURL)?prefix=tier-\(tag)") else { throw BenchmarkError.failed("bad Redis URL") }
            func redis(memory: Int = 20 * 1024 * 1024) throws -> HTTPImageCache { try HTTPImageCache(redis: redisBase, memoryCapacity: memory) }
            func tiered(memory: Int) throws -> HTTPImageCache {
                try HTTPImageCache(tiers: [HTTPImageCache(directory: folder, memoryCapacity: memory), redis(memory: memory)])
            }
            // Filled through Redis alone; then each tier answers in turn, through fresh instances.
            _ = try perDownload(urls, cache: try redis(memory: 0))
            let cold = try tiered(memory: 0)
            figures.redis.add(try perDownload(urls, cache: cold))
            cold.waitForQueuedWrites()
            let warm = try tiered(memory: 20 * 1024 * 1024)
            figures.directory.add(try perDownload(urls, cache: warm))
            figures.memory.add(try perDownload(urls, cache: warm))

            // What Redis sends when the machine's processes read every URL: each with its own memory layer.
            var before = try redisOutputBytes(redisURL)
            for _ in 0..<Self.machineProcesses { _ = try perDownload(urls, cache: try redis()) }
            figures.redisAloneBytes.add(Double(try redisOutputBytes(redisURL) - before) / Double(count * Self.machineProcesses))
            HTTPImageCache(directory: folder).removeAll()
            before = try redisOutputBytes(redisURL)
            for _ in 0..<Self.machineProcesses {
                let process = try tiered(memory: 20 * 1024 * 1024)
                _ = try perDownload(urls, cache: process)
                process.waitForQueuedWrites()
            }
            figures.tieredBytes.add(Double(try redisOutputBytes(redisURL) - before) / Double(count * Self.machineProcesses))
            HTTPImageCache(directory: folder).removeAll()
            try redis().removeAll()
        }
        return figures
    }

    func reportTiers(_ figures: TierFigures) {
        let report = context.report
        let s = Self.section
        report.headline("fleet_tier_hit_ms_memory", section: s, label: "directory + Redis tiers: one download served from the memory layer (decode off)", unit: "ms", figures.memory)
        report.headline("fleet_tier_hit_ms_directory", section: s, label: "directory + Redis tiers: one download served from the directory tier (decode off)", unit: "ms", figures.directory)
        report.headline("fleet_tier_hit_ms_redis", section: s, label: "directory + Redis tiers: one download served from the Redis tier, copied into the directory (decode off)", unit: "ms", figures.redis)
        report.detail("fleet_redis_bytes_per_hit_alone", section: s, label: "Redis alone: bytes Redis sends per download, \(Self.machineProcesses) processes of one machine reading the same URLs", unit: "B", figures.redisAloneBytes)
        report.headline("fleet_tier_redis_bytes_per_hit", section: s, label: "directory + Redis tiers: bytes Redis sends per download, \(Self.machineProcesses) processes of one machine reading the same URLs", unit: "B", figures.tieredBytes)
        report.detail("fleet_tier_redis_bytes_ratio_vs_alone", section: s, label: "bytes Redis sends with the directory tier ÷ Redis alone", unit: "×", ratios(figures.tieredBytes, figures.redisAloneBytes))
    }

    /// Redis's `total_net_output_bytes` (`redis-cli INFO stats`).
    private func redisOutputBytes(_ redisURL: String) throws -> Int {
        let outcome = try ChildProcess.run(["redis-cli", "-u", redisURL, "INFO", "stats"], captureOutput: true)
        guard outcome.status == 0, let line = outcome.output.split(whereSeparator: \.isNewline)
            .first(where: { $0.hasPrefix("total_net_output_bytes:") }),
              let value = Int(line.dropFirst("total_net_output_bytes:".count).trimmingCharacters(in: .whitespaces)) else {
            throw BenchmarkError.failed("redis-cli INFO stats: no total_net_output_bytes (\(outcome.output.prefix(200)))")
        }
        return value
    }
}

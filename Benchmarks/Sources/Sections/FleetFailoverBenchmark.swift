import Foundation

/// The Fleet section's failover rounds (issue 39): 4 `imagedl` processes download the same URLs from nginx
/// through `--http-cache redis-sentinel://…` (a primary, a replica, three Sentinels of the round's own), and the
/// primary is killed (SIGKILL) once a fifth of the URLs have reached nginx. The Sentinels promote the replica;
/// the processes follow it, keeping single-flight meanwhile (`lock_timeout`: the longest a failover is waited
/// for). Counted: the requests that reached nginx per distinct URL (goal ≤ 1.05), failed downloads (goal 0),
/// and the wall time of the round.
struct FleetFailoverBenchmark {
    let context: RunContext
    static let section = "Fleet"
    static let processes = 4

    func run() throws {
        let report = context.report
        let s = Self.section
        guard context.redisURL != nil else {
            for key in ["fleet_failover_origin_requests_per_url", "fleet_failover_failed_downloads"] {
                report.skip(key, reason: "no redis-server (run.sh installs one)")
            }
            return
        }
        let imagedl = URL(fileURLWithPath: context.executable).deletingLastPathComponent().appendingPathComponent("imagedl").path
        guard FileManager.default.isExecutableFile(atPath: imagedl) else { throw BenchmarkError.missing("imagedl next to the Benchmarks executable") }
        let available = context.fixtures.smallCount(format: "jpg")
        guard available > 0 else { throw BenchmarkError.missing("small images (run prepare)") }
        let count = context.quick ? 200 : 1000
        context.log("fleet failover: \(Self.processes) processes × \(count) URLs × \(context.rounds) rounds, primary killed at \(count / 5)")

        var perURL = Samples(), failed = Samples(), wall = Samples(), primaryMoved = Samples()
        for _ in 0..<context.rounds {
            let deployment = try SentinelDeployment()
            defer { deployment.stop() }
            let tag = "failover-" + UUID().uuidString.prefix(8)
            let file = context.fixtures.directory.appendingPathComponent("fleet-\(tag).txt")
            let lines = (0..<count).map { "\(context.baseURL)/fleet/\(Fixtures.smallPath($0 % available, format: "jpg"))?fleet=\(tag)-\($0)" }
            try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let logStart = accessLogSize()
            let arguments = [imagedl, "--json", "--input", file.path, "--http-cache",
                             deployment.url(query: "prefix=\(tag)&lock_timeout=8")]
            // The kill, from another thread, once a fifth of the URLs have reached nginx.
            let log = context.accessLog
            let killed = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                // Bounded: 60 s at most.
                for _ in 0..<12_000 {
                    if Self.requests(containing: tag, in: log, from: logStart) >= count / 5 { break }
                    usleep(5_000)
                }
                deployment.killPrimary()
                killed.signal()
            }
            let start = Clock.wall()
            let outcomes = try runFleet(arguments)
            wall.add(Clock.wall() - start)
            killed.wait()
            let records = outcomes.flatMap { $0.output.split(separator: "\n") }
            let failures = records.filter { !$0.contains("\"status\":\"ok\"") }.count + (count * Self.processes - records.count)
            failed.add(Double(failures))
            // nginx logs a request when it completes: a bounded wait for stragglers.
            usleep(300_000)
            perURL.add(Double(Self.requests(containing: tag, in: context.accessLog, from: logStart)) / Double(count))
            primaryMoved.add(deployment.currentPrimaryPort == deployment.replicaPort ? 1 : 0)
        }
        if primaryMoved.values.contains(0) { report.error("fleet failover: the Sentinels did not promote the replica in every round") }
        report.headline("fleet_failover_origin_requests_per_url", section: s,
                        label: "\(Self.processes) processes × \(count) URLs on Sentinel, primary killed mid-run → nginx requests per URL",
                        unit: "×", perURL)
        report.headline("fleet_failover_failed_downloads", section: s, label: "downloads failed across the Sentinel failover",
                        unit: "downloads", failed)
        report.detail("fleet_failover_wall_s", section: s, label: "\(Self.processes) processes × \(count) URLs across the failover, wall time",
                      unit: "s", wall)
    }

    /// Runs `arguments` as `processes` children at once; their outcomes.
    private func runFleet(_ arguments: [String]) throws -> [ChildProcess.Outcome] {
        let results = FailoverResults(count: Self.processes)
        DispatchQueue.concurrentPerform(iterations: Self.processes) { index in
            results.set(index, Result { try ChildProcess.run(arguments, captureOutput: true) })
        }
        return try results.all.map { try $0.get() }
    }

    private func accessLogSize() -> UInt64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: context.accessLog.path)
        return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// Access-log lines naming `token` written from byte `offset` on.
    static func requests(containing token: String, in log: URL, from offset: UInt64) -> Int {
        guard let handle = try? FileHandle(forReadingFrom: log) else { return 0 }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: offset)) != nil, let data = try? handle.readToEnd() else { return 0 }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.contains(token) }.count
    }
}

/// The children's outcomes, filled from concurrent threads.
private final class FailoverResults: @unchecked Sendable {  // `values` guarded by `lock`
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

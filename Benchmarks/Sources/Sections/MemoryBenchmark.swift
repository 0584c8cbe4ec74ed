import Foundation

/// Peak RSS of download workloads, each in its own child process (measured by `/usr/bin/time`: see
/// `ChildProcess`), so one case's heap does not inflate the next.
struct MemoryBenchmark {
    let context: RunContext
    static let section = "Memory"

    func run() throws {
        let report = context.report
        let s = Self.section
        let rounds = context.quick ? 1 : 5  // one child per round: at least 5 in a full run
        if RunContext.jpegCoderAvailable {
            let count = context.quick ? 20 : 200
            let rss = try peakRSS(.memoryLarge, count: count, rounds: rounds)
            report.headline("peak_rss_mb_large", section: s, label: "\(count) × 12 MP JPEG, .scaleDownLargeImages", unit: "MB", rss)
        } else {
            report.skip("peak_rss_mb_large", reason: "no JPEG coder registered in ImageCodersManager yet")
        }
        let many = context.quick ? 2_000 : 20_000
        let manyRounds = rounds
        report.headline("peak_rss_mb_many", section: s, label: "\(many) small downloads, decode off", unit: "MB",
                        try peakRSS(.memoryMany, count: many, rounds: manyRounds))
        report.detail("peak_rss_mb_many_decoded", section: s, label: "\(many) small downloads (\(context.decodedSmallFormat)), decoded, default 100 MB memory cache", unit: "MB",
                      try peakRSS(.memoryManyDecoded, count: many, rounds: manyRounds))
        if context.quick {
            report.note(s, "--quick: one child per case and smaller counts")
        }
    }

    /// Peak RSS in MB of `workload` run `rounds` times, each in a fresh child process.
    func peakRSS(_ workload: ChildWorkload, count: Int, rounds: Int) throws -> Samples {
        var samples = Samples()
        for _ in 0..<rounds {
            context.log("memory: \(workload.rawValue) × \(count)")
            let outcome = try ChildProcess.run(
                [context.executable, "child", workload.rawValue, "--base-url", context.baseURL, "--count", String(count),
                 "--dir", context.fixtures.directory.path],
                captureOutput: true, measurePeakRSS: true)
            guard outcome.status == 0 else {
                context.report.error("memory \(workload.rawValue): child exited with \(outcome.status): \(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines))")
                continue
            }
            samples.add(Double(outcome.peakRSS) / 1_048_576)
        }
        return samples
    }
}

import Foundation
import OperationDownloader

/// Instructions per download, from callgrind: machine-independent, so changes compare across noisy
/// machines. Two runs of different sizes per client; the difference divided by the difference in count
/// removes start-up and session set-up (instructions per *additional* download).
struct InstructionsBenchmark {
    let context: RunContext
    static let section = "Instructions"

    func run() throws {
        guard ChildProcess.exists("valgrind") else {
            context.report.skip("instructions_per_download", reason: "valgrind not installed")
            return
        }
        // valgrind 3.19 cannot read the DWARF the Swift 6 toolchain writes ("possibly corrupted debuginfo"):
        // run a copy without debug sections (instruction counts are unaffected).
        let stripped = context.fixtures.directory.appendingPathComponent("Benchmarks-stripped").path
        let strip = try ChildProcess.run(["objcopy", "--strip-debug", context.executable, stripped])
        guard strip.status == 0 else { throw BenchmarkError.tool("objcopy --strip-debug exited with \(strip.status)") }
        // The quick run (CI) counts as the full run does (50 and 250 downloads: per-download counts depend on the
        // counts taken, as connection warm-up is shared out differently), the enforced goal's two clients in 3
        // rounds and the rest once. URLSession's dispatch timers add clock-driven work (about 5 M instructions
        // between runs of 250); with 10 and 110 downloads one commit measured 1.04 to 1.09 against raw URLSession.
        let (small, large) = (50, 250)
        let rounds = context.quick ? 3 : 5
        var ours = Samples()
        var raw = Samples()
        var probe = Samples()
        var quiet = Samples()
        var metrics = Samples()
        var curl = Samples()
        var curlMetrics = Samples()
        let measuresCurl = ImageDownloaderTransport.curl.isAvailable
        var httpCache = Samples()
        for round in 0..<rounds {
            ours.add(try perDownload(.instructionsDownloader, executable: stripped, small: small, large: large))
            raw.add(try perDownload(.instructionsURLSession, executable: stripped, small: small, large: large))
            if context.quick, round > 0 { continue }
            probe.add(try perDownload(.instructionsOperationProbe, executable: stripped, small: small, large: large))
            quiet.add(try perDownload(.instructionsDownloaderQuiet, executable: stripped, small: small, large: large))
            metrics.add(try perDownload(.instructionsDownloaderMetrics, executable: stripped, small: small, large: large))
            if measuresCurl {
                curl.add(try perDownload(.instructionsDownloaderCurl, executable: stripped, small: small, large: large))
                curlMetrics.add(try perDownload(.instructionsDownloaderCurlMetrics, executable: stripped, small: small, large: large))
            }
            httpCache.add(try perDownload(.instructionsDownloaderHTTPCache, executable: stripped, small: small, large: large))
        }
        let s = Self.section
        context.report.headline("instructions_per_download", section: s, label: "ImageDownloader (decode off), instructions per download", unit: "instr", ours)
        context.report.detail("urlsession_instructions_per_download", section: s, label: "raw URLSession tasks, instructions per download", unit: "instr", raw)
        context.report.detail("instructions_ratio_vs_urlsession", section: s, label: "ImageDownloader ÷ raw URLSession instructions", unit: "×", ratios(ours, raw))
        context.report.detail("operation_probe_instructions_per_download", section: s, label: "bare Operation per download (no package code), instructions per download", unit: "instr", probe)
        context.report.detail("instructions_ratio_vs_operation_probe", section: s, label: "ImageDownloader ÷ bare Operation per download instructions", unit: "×", ratios(ours, probe))
        // What the four notifications SPEC §6.7 asks for cost (posting with no observer), and the package
        // without them against raw URLSession.
        context.report.detail("instructions_quiet_per_download", section: s, label: "ImageDownloader, postsNotifications = false, instructions per download", unit: "instr", quiet)
        context.report.detail("notifications_instructions_per_download", section: s, label: "the four notifications (ImageDownloader − the same without notifications), instructions per download", unit: "instr",
                              Samples(zip(ours.values, quiet.values).map { $0 - $1 }))
        context.report.detail("instructions_quiet_ratio_vs_urlsession", section: s, label: "ImageDownloader without notifications ÷ raw URLSession instructions", unit: "×", ratios(quiet, raw))
        // What the metrics cost (issue 38): the same downloads with PrometheusMetrics as the metrics sink.
        context.report.detail("metrics_instructions_per_download", section: s, label: "ImageDownloader with PrometheusMetrics as metricsSink, instructions per download", unit: "instr", metrics)
        context.report.headline("metrics_instructions_ratio", section: s, label: "ImageDownloader with PrometheusMetrics ÷ without (goal ≤ 1.02)", unit: "×", ratios(metrics, ours))
        if measuresCurl {
            context.report.detail("metrics_curl_instructions_per_download", section: s, label: "ImageDownloader on curl with PrometheusMetrics, instructions per download", unit: "instr", curlMetrics)
            context.report.headline("metrics_curl_instructions_ratio", section: s, label: "ImageDownloader on curl with PrometheusMetrics ÷ without (goal ≤ 1.02)", unit: "×", ratios(curlMetrics, curl))
        } else {
            context.report.skip("metrics_curl_instructions_ratio", reason: "libcurl.so.4 cannot be loaded")
        }
        // With the HTTP cache (a directory): each URL stored by one downloader, then served from the cache to another.
        context.report.detail("instructions_http_cache_per_url", section: s, label: "ImageDownloader with a directory HTTP cache (decode off), a download stored then one served from the cache, instructions per URL", unit: "instr", httpCache)
        context.report.note(s, "callgrind: (Ir(\(large)) − Ir(\(small))) ÷ \(large - small), all threads, without libhwy's clock calibration (CallgrindCount)")
    }

    private func perDownload(_ workload: ChildWorkload, executable: String, small: Int, large: Int) throws -> Double {
        let a = try instructions(workload, executable: executable, count: small)
        let b = try instructions(workload, executable: executable, count: large)
        return Double(b - a) / Double(large - small)
    }

    private func instructions(_ workload: ChildWorkload, executable: String, count: Int) throws -> Int {
        context.log("instructions: \(workload.rawValue) × \(count) under callgrind")
        let out = context.fixtures.directory.appendingPathComponent("callgrind-\(workload.rawValue)-\(count).out")
        defer { try? FileManager.default.removeItem(at: out) }
        let outcome = try ChildProcess.run([
            "valgrind", "--tool=callgrind", "--quiet", "--callgrind-out-file=\(out.path)",
            executable, "child", workload.rawValue, "--base-url", context.baseURL, "--count", String(count),
            "--dir", context.fixtures.directory.path,
        ], captureOutput: true)
        guard outcome.status == 0 else {
            throw BenchmarkError.tool("callgrind \(workload.rawValue) exited with \(outcome.status): \(outcome.output)")
        }
        return try CallgrindCount.instructions(out)
    }
}

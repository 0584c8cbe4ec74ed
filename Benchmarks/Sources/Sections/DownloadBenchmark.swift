import Foundation
import OperationDownloader

/// Download throughput: the same batch of ~30 KB images from nginx on 127.0.0.1, 6 connections, through
/// ImageDownloader (decode off, then on), raw URLSession tasks with the same session settings, and
/// `curl --parallel --parallel-max 6`. Every client runs in its own process (no client's leftover threads or
/// sessions cost CPU in another's measurement); clients take turns within each round (rotating order), and
/// every ratio is taken within a round.
struct DownloadBenchmark {
    let context: RunContext
    static let section = "Download"

    private enum Client: CaseIterable {
        case downloader, downloaderQuiet, operationProbe, downloaderDecoding, urlSession, curl
    }

    func run() throws {
        let report = context.report
        let available = context.fixtures.smallCount(format: "jpg")
        let count = min(context.quick ? 200 : 1000, available)
        guard count > 0 else { throw BenchmarkError.missing("small images (run prepare)") }
        let format = context.decodedSmallFormat
        let plain = try urls(count: count, format: "jpg")
        let decoded = try urls(count: count, format: format)
        let curlConfig = try writeCurlConfig(plain)
        let curlAvailable = ChildProcess.exists("curl")

        var wall: [Client: Samples] = [:]
        var cpu: [Client: Samples] = [:]
        // Whole child processes, start-up included: the only way curl can be timed, so every ratio against curl
        // compares these (ChildCost).
        var processWall: [Client: Samples] = [:]
        // Wall-clock throughput scatters most on a shared machine (a virtual machine's neighbours take the
        // CPU in bursts, ±10% between rounds): three times the rounds of the other sections.
        let rounds = context.quick ? context.rounds : 21
        context.log("download: \(count) images × \(rounds) rounds (+1 warm-up)")
        for round in 0...rounds {
            var clients = Client.allCases.filter { $0 != .curl || curlAvailable }
            clients = Array(clients[(round % clients.count)...] + clients[..<(round % clients.count)])
            var costs: [Client: ChildCost] = [:]
            for client in clients {
                costs[client] = try measure(client, plain: plain, decoded: decoded, curlConfig: curlConfig)
            }
            guard round > 0 else { continue }  // round 0 warms up nginx, the page cache and the code
            for (client, cost) in costs {
                // curl has no time of its own: its rows are its whole process.
                let own = cost.own ?? cost.process
                wall[client, default: Samples()].add(own.wall)
                cpu[client, default: Samples()].add(own.cpu)
                processWall[client, default: Samples()].add(cost.process.wall)
            }
        }

        let rate = { (client: Client) in (wall[client] ?? Samples()).map { Double(count) / $0 } }
        let cpuMs = { (client: Client) in (cpu[client] ?? Samples()).map { $0 * 1000 / Double(count) } }
        let processRate = { (client: Client) in (processWall[client] ?? Samples()).map { Double(count) / $0 } }
        let s = Self.section
        report.headline("download_ratio_vs_urlsession", section: s, label: "ImageDownloader (decode off) req/s ÷ URLSession req/s", unit: "×", ratios(rate(.downloader), rate(.urlSession)))
        if curlAvailable {
            report.headline("download_ratio_vs_curl", section: s, label: "ImageDownloader (decode off) req/s ÷ curl req/s, both whole processes (start-up included)", unit: "×", ratios(processRate(.downloader), processRate(.curl)))
            report.detail("downloader_process_req_per_s", section: s, label: "ImageDownloader, decode off, whole process (start-up included, as curl)", unit: "req/s", processRate(.downloader))
        } else {
            report.skip("download_ratio_vs_curl", reason: "curl not installed")
        }
        report.headline("cpu_ms_per_download", section: s, label: "ImageDownloader (decode off) CPU per download", unit: "ms", cpuMs(.downloader))
        report.headline("urlsession_cpu_ms_per_download", section: s, label: "raw URLSession CPU per download", unit: "ms", cpuMs(.urlSession))
        report.detail("download_quiet_ratio_vs_urlsession", section: s, label: "ImageDownloader (decode off, postsNotifications = false) req/s ÷ URLSession req/s", unit: "×", ratios(rate(.downloaderQuiet), rate(.urlSession)))
        report.detail("quiet_cpu_ms_per_download", section: s, label: "ImageDownloader (decode off, postsNotifications = false) CPU per download", unit: "ms", cpuMs(.downloaderQuiet))
        report.detail("operation_probe_ratio_vs_urlsession", section: s, label: "bare Operation per download (no package code) req/s ÷ URLSession req/s", unit: "×", ratios(rate(.operationProbe), rate(.urlSession)))
        report.detail("download_ratio_vs_operation_probe", section: s, label: "ImageDownloader (decode off) req/s ÷ bare Operation per download req/s", unit: "×", ratios(rate(.downloader), rate(.operationProbe)))
        report.detail("operation_probe_cpu_ms_per_download", section: s, label: "bare Operation per download, CPU per download", unit: "ms", cpuMs(.operationProbe))
        report.detail("download_decoded_ratio_vs_urlsession", section: s, label: "ImageDownloader (decode on, \(format)) req/s ÷ URLSession req/s", unit: "×", ratios(rate(.downloaderDecoding), rate(.urlSession)))
        report.detail("downloader_req_per_s", section: s, label: "ImageDownloader, decode off", unit: "req/s", rate(.downloader))
        report.detail("downloader_decoding_req_per_s", section: s, label: "ImageDownloader, decode on (\(format))", unit: "req/s", rate(.downloaderDecoding))
        report.detail("urlsession_req_per_s", section: s, label: "raw URLSession tasks", unit: "req/s", rate(.urlSession))
        report.detail("downloader_decoding_cpu_ms_per_download", section: s, label: "ImageDownloader, decode on (\(format)), CPU per download", unit: "ms", cpuMs(.downloaderDecoding))
        if curlAvailable {
            report.detail("curl_req_per_s", section: s, label: "curl --parallel --parallel-max 6", unit: "req/s", rate(.curl))
            report.detail("curl_cpu_ms_per_download", section: s, label: "curl CPU per download (child rusage)", unit: "ms", cpuMs(.curl))
        }
        report.note(s, "\(count) images of \(context.fixtures.smallMeanBytes(format: "jpg")) bytes (JPEG) per round; decode-on downloads \(format) images of \(context.fixtures.smallMeanBytes(format: format)) bytes. Each client runs in a fresh child process. The Swift clients time their downloads themselves (wall and process CPU, start-up excluded), and their ratios to each other use those times; curl cannot, so its figures are its whole process (wait4 rusage, start-up included), and the ratio to curl compares whole processes on both sides.")
    }

    private func urls(count: Int, format: String) throws -> [URL] {
        try (0..<count).map { index in
            guard let url = context.url(Fixtures.smallPath(index, format: format)) else {
                throw BenchmarkError.failed("bad base URL \(context.baseURL)")
            }
            return url
        }
    }

    private func writeCurlConfig(_ urls: [URL]) throws -> URL {
        let file = context.fixtures.directory.appendingPathComponent("curl-\(urls.count).conf")
        let text = urls.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }.joined()
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    private func measure(_ client: Client, plain: [URL], decoded: [URL], curlConfig: URL) throws -> ChildCost {
        switch client {
        case .curl:
            let outcome = try ChildProcess.run([
                "curl", "--silent", "--show-error", "--fail", "--no-progress-meter", "--parallel", "--parallel-max", "6",
                "-H", "Accept: image/*,*/*;q=0.8", "-K", curlConfig.path,
            ])
            guard outcome.status == 0 else { throw BenchmarkError.tool("curl exited with \(outcome.status)") }
            return ChildCost(own: nil, process: outcome.cost)
        case .urlSession:
            return try inChild(.downloadURLSession, count: plain.count)
        case .downloader:
            return try inChild(.downloadDownloader, count: plain.count)
        case .downloaderQuiet:
            return try inChild(.downloadDownloaderQuiet, count: plain.count)
        case .operationProbe:
            return try inChild(.downloadOperationProbe, count: plain.count)
        case .downloaderDecoding:
            return try inChild(.downloadDownloaderDecoding, count: decoded.count)
        }
    }

    /// Runs a Swift client in a fresh child process: the downloads as the child timed them (start-up
    /// excluded), and its whole process.
    private func inChild(_ workload: ChildWorkload, count: Int) throws -> ChildCost {
        struct Report: Decodable {
            var failures: Int
            var seconds: Double
            var cpu_seconds: Double
            var first_error: String?
        }
        let outcome = try ChildProcess.run(
            [context.executable, "child", workload.rawValue, "--base-url", context.baseURL, "--count", String(count),
             "--dir", context.fixtures.directory.path],
            captureOutput: true)
        let line = outcome.output.split(separator: "\n").last.map(String.init) ?? ""
        guard outcome.status == 0, let report = try? JSONDecoder().decode(Report.self, from: Data(line.utf8)) else {
            throw BenchmarkError.failed("download \(workload.rawValue): exit \(outcome.status): \(line)")
        }
        return ChildCost(own: Cost(wall: report.seconds, cpu: report.cpu_seconds), process: outcome.cost)
    }
}

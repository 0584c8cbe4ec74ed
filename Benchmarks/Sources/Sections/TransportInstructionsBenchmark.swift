import Foundation

/// Instructions per download under callgrind (load-independent), the instructions section's method:
/// (Ir(large) − Ir(small)) ÷ (large − small), all threads, which removes start-up and connection set-up.
/// The curl command is measured the same way (its own config of URLs). Goal of issue 15: the downloader on
/// curl at ≤ 2× curl's instructions per download; the bare transport shows how much of that budget is left
/// for the operation and the downloader.
struct TransportInstructionsBenchmark {
    let context: RunContext
    static let section = "Transport instructions"

    func run() throws {
        guard ChildProcess.exists("valgrind") else {
            context.report.skip("curl_transport_instructions_per_download", reason: "valgrind not installed")
            return
        }
        // valgrind 3.19 cannot read the Swift 6 toolchain's DWARF: a copy without debug sections (as the
        // instructions section does; counts are unaffected).
        let stripped = context.fixtures.directory.appendingPathComponent("Benchmarks-transport-stripped").path
        let strip = try ChildProcess.run(["objcopy", "--strip-debug", context.executable, stripped])
        guard strip.status == 0 else { throw BenchmarkError.tool("objcopy --strip-debug exited with \(strip.status)") }
        let strippedContext = RunContext(
            fixtures: context.fixtures, baseURL: context.baseURL, accessLog: context.accessLog, quick: context.quick,
            report: context.report, executable: stripped, tls: context.tls)
        let (small, large) = context.quick ? (10, 110) : (50, 250)
        let rounds = context.quick ? 1 : 3
        var clients: [TransportClient] = [.curl, .curlTransport, .downloaderCurl, .urlSession]
        if !ChildProcess.exists("curl") { clients.removeAll { $0 == .curl } }
        for endpoint in TransportEndpoint.all(context) {
            var perDownload: [TransportClient: Samples] = [:]
            var unavailable: [TransportClient: String] = [:]
            var crashes: [TransportClient: [String]] = [:]
            for client in clients {
                if let reason = endpoint.unavailableReason(client) { unavailable[client] = reason }
            }
            for _ in 0..<rounds {
                for client in clients where unavailable[client] == nil {
                    switch try perDownloadInstructions(client, endpoint: endpoint, context: strippedContext, small: small, large: large) {
                    case .success(let value): perDownload[client, default: Samples()].add(value)
                    case .failure(let reason) where reason.crashed: crashes[client, default: []].append(reason.text)
                    case .failure(let reason): unavailable[client] = reason.text
                    }
                }
            }
            report(endpoint, perDownload: perDownload, unavailable: unavailable, crashes: crashes, rounds: rounds)
        }
        context.report.note(Self.section, "callgrind: (Ir(\(large)) − Ir(\(small))) ÷ \(large - small), all threads, without libhwy's clock calibration (CallgrindCount); \(rounds) round(s); curl as `curl --parallel --parallel-max 6 -K <urls>`.")
    }

    private struct Unavailable: Error {
        let text: String
        /// A crash of the client (counted per round and reported), not a client that cannot run here.
        var crashed = false
    }

    private func perDownloadInstructions(
        _ client: TransportClient, endpoint: TransportEndpoint, context: RunContext, small: Int, large: Int
    ) throws -> Result<Double, Unavailable> {
        var counts: [Int] = []
        for count in [small, large] {
            let out = context.fixtures.directory.appendingPathComponent("callgrind-transport-\(client.rawValue)\(endpoint.keySuffix)-\(count).out")
            defer { try? FileManager.default.removeItem(at: out) }
            let valgrind = ["valgrind", "--tool=callgrind", "--quiet", "--callgrind-out-file=\(out.path)"]
            self.context.log("transport instructions: \(client.rawValue)\(endpoint.keySuffix) × \(count) under callgrind")
            let command = try endpoint.command(client, count: count, context: context, wrapper: valgrind)
            let outcome = try ChildProcess.run(command, captureOutput: true)
            if outcome.status == 4, outcome.output.contains("\"unavailable\"") {
                return .failure(Unavailable(text: outcome.output.split(separator: "\n").last.map(String.init) ?? "unavailable"))
            }
            if outcome.status > 128, client.needsSystemTrust {
                // corelibs URLSession's occasional HTTP/2 crash (see TransportBenchmark): counted and reported.
                return .failure(Unavailable(text: "exit \(outcome.status): signal \(outcome.status - 128)", crashed: true))
            }
            guard outcome.status == 0 else {
                throw BenchmarkError.tool("callgrind \(client.rawValue)\(endpoint.keySuffix) exited with \(outcome.status): \(outcome.output.suffix(300))")
            }
            counts.append(try CallgrindCount.instructions(out))
        }
        return .success(Double(counts[1] - counts[0]) / Double(large - small))
    }

    private func report(
        _ endpoint: TransportEndpoint, perDownload: [TransportClient: Samples], unavailable: [TransportClient: String],
        crashes: [TransportClient: [String]], rounds: Int
    ) {
        let report = context.report
        let s = Self.section
        let x = endpoint.keySuffix
        let over = x.isEmpty ? "" : " (\(endpoint.name))"
        func samples(_ client: TransportClient) -> Samples? {
            guard let found = perDownload[client], found.count > 0 else { return nil }
            return found
        }
        func skip(_ key: String, _ client: TransportClient) {
            let crashed = crashes[client].map { "crashed in every round (\($0.count) of \(rounds): \($0.first ?? ""))" }
            report.skip(key, reason: unavailable[client].map { "not measured: \($0)" } ?? crashed ?? "not measured")
        }
        for (client, crashed) in crashes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            report.detail("transports_\(client.rawValue)_instructions_crashed_rounds\(x)", section: s,
                          label: "\(client.label)\(over) under callgrind: rounds that crashed, of \(rounds)", unit: "rounds",
                          Samples([Double(crashed.count)]))
            report.note(s, "\(client.label)\(over) crashed under callgrind in \(crashed.count) of \(rounds) rounds (\(crashed.joined(separator: "; "))).")
        }
        let keys: [(TransportClient, String)] = [
            (.curl, "curl_instructions_per_download"), (.curlTransport, "curl_transport_instructions_per_download"),
            (.downloaderCurl, "downloader_curl_instructions_per_download"),
            (.urlSession, "transports_urlsession_instructions_per_download"),
        ]
        for (client, key) in keys {
            if let values = samples(client) {
                let add = client == .curlTransport || client == .curl ? report.headline : report.detail
                add("\(key)\(x)", s, "\(client.label)\(over), instructions per download", "instr", values)
            } else {
                skip("\(key)\(x)", client)
            }
        }
        if let curl = samples(.curl) {
            if let transport = samples(.curlTransport) {
                report.headline("curl_transport_instructions_ratio_vs_curl\(x)", section: s, label: "bare curl transport ÷ curl instructions per download\(over)", unit: "×", ratios(transport, curl))
            }
            if let downloader = samples(.downloaderCurl) {
                report.headline("downloader_curl_instructions_ratio_vs_curl\(x)", section: s, label: "ImageDownloader on curl ÷ curl instructions per download (goal ≤ 2)\(over)", unit: "×", ratios(downloader, curl))
            } else {
                skip("downloader_curl_instructions_ratio_vs_curl\(x)", .downloaderCurl)
            }
        }
    }
}

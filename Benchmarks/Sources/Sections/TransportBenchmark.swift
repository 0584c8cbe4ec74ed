import Foundation

/// Transports (issue 15): the same 1000 × 30 KB from nginx through `curl --parallel --parallel-max 6`, the
/// bare curl transport, the downloader on it, raw URLSession and the downloader on URLSession, over HTTP/1.1
/// and over HTTPS with HTTP/2. Each client in its own process, clients rotating within rounds, every ratio
/// taken within a round (as the download section does). The issue's goals: the downloader on curl at
/// ≥ 0.8× curl's throughput (and ≤ 2× its instructions: see TransportInstructionsBenchmark). Two probes show
/// the ceiling of the design itself: a bare `Operation` per URL on the curl transport, without and with a
/// callback queue, and none of the package's code.
struct TransportBenchmark {
    let context: RunContext
    static let section = "Transports"

    func run() throws {
        let available = context.fixtures.smallCount(format: "jpg")
        let count = min(context.quick ? 200 : 1000, available)
        guard count > 0 else { throw BenchmarkError.missing("small images (run prepare)") }
        let rounds = context.quick ? context.rounds : 11
        let curlAvailable = ChildProcess.exists("curl")
        for endpoint in TransportEndpoint.all(context) {
            try measure(endpoint, count: count, rounds: rounds, curlAvailable: curlAvailable)
        }
        context.report.note(Self.section, "\(count) JPEGs of \(context.fixtures.smallMeanBytes(format: "jpg")) bytes per round, 6 at a time, \(rounds) rounds (+1 warm-up). The Swift clients time their downloads themselves (start-up excluded) and their ratios to each other use those times; curl cannot, so its figures are its whole process (start-up included) and every ratio to curl compares whole processes on both sides. A client that crashes in a round is counted (its rows then come from the rounds it finished). Over HTTPS every client verifies nginx's certificate (a CA made by run.sh: `--cacert` for curl, `tls.caFile` for the curl transport, added to the system bundle in a private mount namespace for URLSession).")
    }

    private func measure(_ endpoint: TransportEndpoint, count: Int, rounds: Int, curlAvailable: Bool) throws {
        var clients = TransportClient.compared.filter { $0 != .curl || curlAvailable }
        var figures = Figures(rounds: rounds)
        for client in clients {
            if let reason = endpoint.unavailableReason(client) { figures.unavailable[client] = reason }
        }
        clients.removeAll { figures.unavailable[$0] != nil }
        context.log("transports (\(endpoint.name)): \(count) images × \(rounds) rounds (+1 warm-up)")
        for round in 0...rounds {
            let order = Array(clients[(round % clients.count)...] + clients[..<(round % clients.count)])
            for client in order {
                let run: TransportRun
                do {
                    run = try TransportRun.run(endpoint.command(client, count: count, context: context), client: client)
                } catch let failure as TransportRun.Crash where client.needsSystemTrust {
                    // corelibs URLSession crashes now and then over HTTP/2 (a platform bug, Docs/Transports.md):
                    // counted and reported beside that client's figures; a crash of anything else ends the run.
                    figures.crashes[client, default: []].append("round \(round): \(failure)")
                    continue
                }
                switch run {
                case .measured(let cost) where round > 0:
                    figures.costs[client, default: [:]][round] = cost
                case .measured:
                    break  // round 0 warms up nginx, the page cache and the code
                case .unavailable(let reason):
                    figures.unavailable[client] = reason
                    clients.removeAll { $0 == client }
                }
            }
        }
        report(endpoint, count: count, figures)
    }

    /// What the rounds of one endpoint gave, per client and round (a round a client crashed in has no cost,
    /// so ratios pair only the rounds both clients finished).
    private struct Figures {
        let rounds: Int
        var costs: [TransportClient: [Int: ChildCost]] = [:]
        /// The rounds (warm-up included) in which the client crashed, with the signal.
        var crashes: [TransportClient: [String]] = [:]
        var unavailable: [TransportClient: String] = [:]

        /// The client's own timing (curl: its whole process), or its whole process, round by round.
        func series(_ client: TransportClient, process: Bool = false, _ value: (Cost) -> Double) -> [Int: Double] {
            (costs[client] ?? [:]).mapValues { value(process ? $0.process : ($0.own ?? $0.process)) }
        }

        func samples(_ series: [Int: Double]) -> Samples { Samples(series.keys.sorted().compactMap { series[$0] }) }

        /// a[round] / b[round] over the rounds both have.
        func ratios(_ a: [Int: Double], _ b: [Int: Double]) -> Samples {
            Samples(a.keys.sorted().compactMap { round -> Double? in
                guard let numerator = a[round], let denominator = b[round], denominator != 0 else { return nil }
                return numerator / denominator
            })
        }
    }

    private func report(_ endpoint: TransportEndpoint, count: Int, _ figures: Figures) {
        let report = context.report
        let s = Self.section
        let x = endpoint.keySuffix
        let over = endpoint.keySuffix.isEmpty ? "" : " (\(endpoint.name))"
        let rounds = figures.rounds
        let (crashes, unavailable) = (figures.crashes, figures.unavailable)
        // Requests per second, round by round: the client's own timing, or its whole process.
        func rates(_ client: TransportClient, process: Bool = false) -> [Int: Double] {
            figures.series(client, process: process) { Double(count) / $0.wall }
        }
        func rate(_ client: TransportClient) -> Samples { figures.samples(rates(client)) }
        func processRate(_ client: TransportClient) -> Samples { figures.samples(rates(client, process: true)) }
        func cpuMs(_ client: TransportClient) -> Samples { figures.samples(figures.series(client) { $0.cpu * 1000 / Double(count) }) }
        func ratio(_ a: TransportClient, _ b: TransportClient, process: Bool = false) -> Samples {
            figures.ratios(rates(a, process: process), rates(b, process: process))
        }
        func measured(_ client: TransportClient) -> Bool { !(figures.costs[client] ?? [:]).isEmpty }
        func skip(_ key: String, _ client: TransportClient) {
            let crashed = crashes[client].map { "crashed in every round (\($0.count) of \(rounds + 1): \($0.first ?? ""))" }
            report.skip(key, reason: unavailable[client].map { "not measured: \($0)" } ?? crashed
                ?? (client == .curl ? "curl not installed" : "not measured"))
        }

        for client in TransportClient.compared {
            // "transports_" keeps these apart from the download section's keys (curl_req_per_s, ...).
            let key = "transports_\(client.rawValue)_req_per_s\(x)"
            if measured(client) {
                report.detail(key, section: s, label: "\(client.label)\(over)", unit: "req/s", rate(client))
                report.detail("transports_\(client.rawValue)_cpu_ms_per_download\(x)", section: s,
                              label: "\(client.label)\(over), CPU per download", unit: "ms", cpuMs(client))
                if client != .curl {
                    report.detail("transports_\(client.rawValue)_process_req_per_s\(x)", section: s,
                                  label: "\(client.label)\(over), whole process (start-up included, as curl)", unit: "req/s", processRate(client))
                }
            } else {
                skip(key, client)
            }
            if let crashed = crashes[client] {
                report.detail("transports_\(client.rawValue)_crashed_rounds\(x)", section: s,
                              label: "\(client.label)\(over): rounds that crashed, of \(rounds + 1)", unit: "rounds", Samples([Double(crashed.count)]))
                report.note(s, "\(client.label)\(over) crashed in \(crashed.count) of \(rounds + 1) rounds (\(crashed.joined(separator: "; "))); its figures are from the other rounds.")
            }
        }
        if measured(.curlTransport) {
            report.headline("curl_transport_cpu_ms_per_download\(x)", section: s, label: "bare curl transport CPU per download\(over)", unit: "ms", cpuMs(.curlTransport))
            if measured(.urlSession) {
                report.detail("curl_transport_ratio_vs_urlsession\(x)", section: s, label: "bare curl transport req/s ÷ raw URLSession req/s\(over)", unit: "×", ratio(.curlTransport, .urlSession))
            }
        }
        if measured(.curlTransport) && measured(.curl) {
            report.headline("curl_transport_ratio_vs_curl\(x)", section: s, label: "bare curl transport req/s ÷ curl req/s, whole processes\(over)", unit: "×", ratio(.curlTransport, .curl, process: true))
        } else {
            skip("curl_transport_ratio_vs_curl\(x)", measured(.curlTransport) ? .curl : .curlTransport)
        }
        // The ceiling of SPEC §6.2's shape on curl: an Operation per URL with none of the package's code.
        for probe in [TransportClient.curlOperationProbe, .curlOperationCallbackProbe] where measured(probe) {
            if measured(.curl) {
                report.detail("\(probe.rawValue)_ratio_vs_curl\(x)", section: s, label: "\(probe.label) req/s ÷ curl req/s, whole processes\(over)", unit: "×", ratio(probe, .curl, process: true))
            }
            if measured(.downloaderCurl) {
                report.detail("downloader_curl_ratio_vs_\(probe.rawValue)\(x)", section: s, label: "ImageDownloader on curl req/s ÷ \(probe.label) req/s\(over)", unit: "×", ratio(.downloaderCurl, probe))
            }
        }
        if measured(.downloaderCurl) && measured(.curl) {
            report.headline("downloader_curl_ratio_vs_curl\(x)", section: s, label: "ImageDownloader on curl req/s ÷ curl req/s, whole processes (goal ≥ 0.8)\(over)", unit: "×", ratio(.downloaderCurl, .curl, process: true))
            report.detail("downloader_curl_cpu_ms_per_download\(x)", section: s, label: "ImageDownloader on curl, CPU per download\(over)", unit: "ms", cpuMs(.downloaderCurl))
            if measured(.downloaderURLSession) {
                report.detail("downloader_curl_ratio_vs_downloader_urlsession\(x)", section: s, label: "ImageDownloader on curl req/s ÷ on URLSession req/s\(over)", unit: "×", ratio(.downloaderCurl, .downloaderURLSession))
            }
        } else {
            skip("downloader_curl_ratio_vs_curl\(x)", measured(.downloaderCurl) ? .curl : .downloaderCurl)
        }
    }
}

import Foundation

/// Transports (issue 15): the same 1000 × 30 KB from nginx through `curl --parallel --parallel-max 6`, the
/// bare curl transport, the downloader on it, raw URLSession and the downloader on URLSession, over HTTP/1.1
/// and over HTTPS with HTTP/2. Each client in its own process, clients rotating within rounds, every ratio
/// taken within a round (as the download section does). The issue's goals: the downloader on curl at
/// ≥ 0.8× curl's throughput (and ≤ 2× its instructions: see TransportInstructionsBenchmark).
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
        context.report.note(Self.section, "\(count) JPEGs of \(context.fixtures.smallMeanBytes(format: "jpg")) bytes per round, 6 at a time, \(rounds) rounds (+1 warm-up); curl's figures are its whole process, the Swift clients time their downloads themselves. Over HTTPS every client verifies nginx's certificate (a CA made by run.sh: `--cacert` for curl, `tls.caFile` for the curl transport, added to the system bundle in a private mount namespace for URLSession).")
    }

    private func measure(_ endpoint: TransportEndpoint, count: Int, rounds: Int, curlAvailable: Bool) throws {
        var clients = TransportClient.allCases.filter { $0 != .curl || curlAvailable }
        var wall: [TransportClient: Samples] = [:]
        var cpu: [TransportClient: Samples] = [:]
        var unavailable: [TransportClient: String] = [:]
        for client in clients {
            if let reason = endpoint.unavailableReason(client) { unavailable[client] = reason }
        }
        clients.removeAll { unavailable[$0] != nil }
        context.log("transports (\(endpoint.name)): \(count) images × \(rounds) rounds (+1 warm-up)")
        for round in 0...rounds {
            let order = Array(clients[(round % clients.count)...] + clients[..<(round % clients.count)])
            for client in order {
                let run: TransportRun
                do {
                    run = try TransportRun.run(endpoint.command(client, count: count, context: context), client: client)
                } catch let failure as TransportRun.Crash where client.needsSystemTrust {
                    // corelibs URLSession crashes now and then over HTTP/2 (a platform bug, Docs/Transports.md):
                    // that client is not measured; a crash of anything else is an error of the run.
                    run = .unavailable("crashed in round \(round) (\(failure))")
                }
                switch run {
                case .measured(let cost) where round > 0:
                    wall[client, default: Samples()].add(cost.wall)
                    cpu[client, default: Samples()].add(cost.cpu)
                case .measured:
                    break  // round 0 warms up nginx, the page cache and the code
                case .unavailable(let reason):
                    unavailable[client] = reason
                    clients.removeAll { $0 == client }
                }
            }
        }
        report(endpoint, count: count, wall: wall, cpu: cpu, unavailable: unavailable, curlAvailable: curlAvailable)
    }

    private func report(
        _ endpoint: TransportEndpoint, count: Int, wall: [TransportClient: Samples], cpu: [TransportClient: Samples],
        unavailable: [TransportClient: String], curlAvailable: Bool
    ) {
        let report = context.report
        let s = Self.section
        let x = endpoint.keySuffix
        let over = endpoint.keySuffix.isEmpty ? "" : " (\(endpoint.name))"
        func rate(_ client: TransportClient) -> Samples { (wall[client] ?? Samples()).map { Double(count) / $0 } }
        func cpuMs(_ client: TransportClient) -> Samples { (cpu[client] ?? Samples()).map { $0 * 1000 / Double(count) } }
        func measured(_ client: TransportClient) -> Bool { wall[client]?.count ?? 0 > 0 }
        func skip(_ key: String, _ client: TransportClient) {
            report.skip(key, reason: unavailable[client].map { "not measured: \($0)" }
                ?? (client == .curl ? "curl not installed" : "not measured"))
        }

        for client in TransportClient.allCases {
            // "transports_" keeps these apart from the download section's keys (curl_req_per_s, ...).
            let key = "transports_\(client.rawValue)_req_per_s\(x)"
            if measured(client) {
                report.detail(key, section: s, label: "\(client.label)\(over)", unit: "req/s", rate(client))
                report.detail("transports_\(client.rawValue)_cpu_ms_per_download\(x)", section: s,
                              label: "\(client.label)\(over), CPU per download", unit: "ms", cpuMs(client))
            } else {
                skip(key, client)
            }
        }
        if measured(.curlTransport) {
            report.headline("curl_transport_cpu_ms_per_download\(x)", section: s, label: "bare curl transport CPU per download\(over)", unit: "ms", cpuMs(.curlTransport))
            if measured(.urlSession) {
                report.detail("curl_transport_ratio_vs_urlsession\(x)", section: s, label: "bare curl transport req/s ÷ raw URLSession req/s\(over)", unit: "×", ratios(rate(.curlTransport), rate(.urlSession)))
            }
        }
        if measured(.curlTransport) && measured(.curl) {
            report.headline("curl_transport_ratio_vs_curl\(x)", section: s, label: "bare curl transport req/s ÷ curl req/s\(over)", unit: "×", ratios(rate(.curlTransport), rate(.curl)))
        } else {
            skip("curl_transport_ratio_vs_curl\(x)", measured(.curlTransport) ? .curl : .curlTransport)
        }
        if measured(.downloaderCurl) && measured(.curl) {
            report.headline("downloader_curl_ratio_vs_curl\(x)", section: s, label: "ImageDownloader on curl req/s ÷ curl req/s (goal ≥ 0.8)\(over)", unit: "×", ratios(rate(.downloaderCurl), rate(.curl)))
            report.detail("downloader_curl_cpu_ms_per_download\(x)", section: s, label: "ImageDownloader on curl, CPU per download\(over)", unit: "ms", cpuMs(.downloaderCurl))
            if measured(.downloaderURLSession) {
                report.detail("downloader_curl_ratio_vs_downloader_urlsession\(x)", section: s, label: "ImageDownloader on curl req/s ÷ on URLSession req/s\(over)", unit: "×", ratios(rate(.downloaderCurl), rate(.downloaderURLSession)))
            }
        } else {
            skip("downloader_curl_ratio_vs_curl\(x)", measured(.downloaderCurl) ? .curl : .downloaderCurl)
        }
    }
}

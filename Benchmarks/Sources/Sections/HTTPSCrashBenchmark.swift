import Foundation
import OperationDownloader

/// Crashes over HTTPS (issue 37): corelibs' URLSession on Linux ends its process now and then over HTTP/2
/// (SIGSEGV; Docs/Transports.md knows the bug), so the package's default transport there is curl. This section
/// counts the child processes that die by a signal in 100 rounds of 200 downloads from nginx over HTTPS (HTTP/2),
/// for the downloader on URLSession and for the downloader on the default transport (Docs/Linux.md quotes both).
/// A download that fails without a crash does not count here.
struct HTTPSCrashBenchmark {
    let context: RunContext
    static let section = "HTTPS crashes"

    func run() throws {
        guard let endpoint = TransportEndpoint.all(context).first(where: { $0.tls != nil }) else {
            for client in Self.clients {
                context.report.skip(Self.key(client), reason: "no HTTPS endpoint (run.sh makes one with openssl)")
            }
            return
        }
        let available = context.fixtures.smallCount(format: "jpg")
        let count = min(200, available)
        guard count > 0 else { throw BenchmarkError.missing("small images (run prepare)") }
        let rounds = context.quick ? 4 : 100
        for client in Self.clients {
            if let reason = endpoint.unavailableReason(client) {
                context.report.skip(Self.key(client), reason: "not measured: \(reason)")
                continue
            }
            context.log("https crashes: \(client.rawValue), \(rounds) rounds of \(count)")
            var crashed: [String] = []
            for round in 1...rounds {
                do {
                    _ = try TransportRun.run(endpoint.command(client, count: count, context: context), client: client)
                } catch let crash as TransportRun.Crash {
                    crashed.append("round \(round): \(crash)")
                }
            }
            context.report.headline(Self.key(client), section: Self.section,
                                    label: "\(client.label): rounds that crashed, of \(rounds) (HTTPS, HTTP/2)",
                                    unit: "rounds", Samples([Double(crashed.count)]))
            if !crashed.isEmpty { context.report.note(Self.section, "\(client.label): \(crashed.joined(separator: "; ")).") }
        }
        let transport = ImageDownloaderTransport.platformDefault
        context.report.note(Self.section, "\(rounds) rounds of \(count) small JPEGs each from nginx over HTTPS (HTTP/2), one child process per round; the default transport here is \(transport).")
    }

    static let clients: [TransportClient] = [.downloaderURLSession, .downloaderDefault]

    static func key(_ client: TransportClient) -> String { "https_crashed_rounds_\(client.rawValue)" }
}

import Foundation
import OperationDownloader
import TestRequirements
import Testing
@testable import ImagedlCore

/// `--metrics FILE` (Prometheus text at the end of the run, `-` for stderr), the summary's request-time
/// quantiles and HTTP cache hit ratio, and `--verbose`.
@Suite(.offThePool) struct MetricsOptionTests {
    @Test func theOptionsParse() throws {
        guard case .download(let options) = try ArgumentParser.parse(["--metrics", "m.prom", "--verbose", "http://h.test/a.png"]) else {
            Issue.record("not a download")
            return
        }
        #expect(options.metricsFile == "m.prom" && options.verbose)
        guard case .download(let stderr) = try ArgumentParser.parse(["--metrics=-", "http://h.test/a.png"]) else { return }
        #expect(stderr.metricsFile == "-" && !stderr.verbose)
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["--metrics=", "http://h.test/a.png"]) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["http://h.test/a.png", "--metrics"]) }
    }

    /// Two runs over one HTTP cache folder: the second run's file counts its hit, its 404, and its request.
    @Test func theFileHoldsTheRunsMetrics() throws {
        let gif = try DemoSamples.data(named: "bounce.gif")
        let server = try LoopbackHTTPServer(routes: [
            "/bounce.gif": .init(body: gif, contentType: "image/gif", cacheControl: "max-age=3600"),
        ])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-metrics-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("run.prom")

        func run() -> DownloadCommand {
            var options = DownloadOptions()
            options.urls = [server.url("/bounce.gif"), server.url("/missing.png")]
            options.httpCacheDirectory = folder.appendingPathComponent("cache").path
            options.metricsFile = file.path
            let command = DownloadCommand(options: options, reporter: JSONReporter(write: { _ in }))
            #expect(command.run() == .failure)  // the 404
            return command
        }
        _ = run()
        let second = run()
        let text = try String(contentsOf: file, encoding: .utf8)
        let lines = Set(text.split(separator: "\n").map(String.init))
        let port = String(server.port)
        #expect(lines.contains("od_downloads_total{result=\"success\",source=\"http_cache\"} 1"), "\(text)")
        #expect(lines.contains("od_downloads_total{result=\"failure\",source=\"network\"} 1"))
        #expect(lines.contains("od_http_cache_lookups_total{storage=\"directory\",result=\"hit\"} 1"))
        #expect(lines.contains("od_http_cache_lookups_total{storage=\"directory\",result=\"miss\"} 1"))
        #expect(lines.contains { $0.hasPrefix("http_client_request_duration_seconds_count{http_request_method=\"GET\",server_address=\"127.0.0.1\",server_port=\"\(port)\",http_response_status_code=\"404\",error_type=\"404\"") && $0.hasSuffix(" 1") })
        #expect(!lines.contains { $0.hasPrefix("http_client_request_duration_seconds_count") && $0.contains("status_code=\"200\"") },
                "the hit sent no request")
        #expect(second.runMetrics.summaryLine()?.hasSuffix("HTTP cache hit ratio 50% (1 of 2)") == true, "\(second.runMetrics.summaryLine() ?? "nil")")
        if Requirement.promtool.isAvailable {
            let outcome = try Promtool.check(text)
            #expect(outcome.status == 0 && outcome.output.isEmpty, "\(outcome.output)")
        } else if Requirement.requireAll {
            Requirement.recordIfMissing(.promtool)
        }
    }

    @Test func aFileThatCannotBeWrittenFailsTheRun() throws {
        let server = try LoopbackHTTPServer(routes: ["/a.gif": .init(body: try DemoSamples.data(named: "bounce.gif"), contentType: "image/gif")])
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/a.gif")]
        options.metricsFile = "/nonexistent-\(UUID().uuidString)/run.prom"
        #expect(DownloadCommand(options: options, reporter: JSONReporter(write: { _ in })).run() == .failure)
    }

    /// The quantiles are the request-duration histogram's (as Grafana would show them); the hit ratio counts
    /// fresh, stale and revalidated answers as hits.
    @Test func theSummaryLine() {
        let metrics = RunMetrics(options: DownloadOptions())
        #expect(metrics.summaryLine() == nil)
        let timer = metrics.sink.makeTimer(label: ImageDownloaderMetricName.requestDuration, dimensions: [])
        for _ in 0..<10 { timer.recordNanoseconds(7_000_000) }     // (0.005, 0.01]
        for _ in 0..<10 { timer.recordNanoseconds(60_000_000) }    // (0.05, 0.075]
        #expect(metrics.summaryLine() == "requests: 20, p50 10.0 ms, p95 72.5 ms")
        for (result, count) in [("hit", 3), ("stale", 1), ("revalidated", 2), ("miss", 2)] {
            metrics.sink.makeCounter(label: ImageDownloaderMetricName.httpCacheLookups, dimensions: [("storage", "directory"), ("result", result)])
                .increment(by: Int64(count))
        }
        #expect(metrics.summaryLine() == "requests: 20, p50 10.0 ms, p95 72.5 ms; HTTP cache hit ratio 75% (6 of 8)")
    }

    /// Warnings as imagedl's own lines; debug and info only with --verbose.
    @Test func theLogHandlerPrintsWarningsAndWithVerboseDebug() {
        let printed = LockedLines()
        let quiet = ImagedlLogHandler(verbose: false, write: printed.add)
        let verbose = ImagedlLogHandler(verbose: true, write: printed.add)
        for handler in [quiet, verbose] {
            for level in [ImageDownloaderLogLevel.debug, .info, .warning] {
                handler.log(level: level, message: "\(level.rawValue) message", metadata: [:], source: "OperationDownloader",
                            file: #fileID, function: #function, line: #line)
            }
        }
        #expect(printed.all == ["imagedl: warning message\n", "imagedl: debug: debug message\n", "imagedl: info: info message\n",
                                "imagedl: warning message\n"])
    }
}

/// Lines written from any thread.
final class LockedLines: @unchecked Sendable {  // `lock` guards `lines`
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

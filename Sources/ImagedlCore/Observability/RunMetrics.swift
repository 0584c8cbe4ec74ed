import Foundation
import OperationDownloader

/// One run's observability (`imagedl URL...`, `--demo`, `thumbnail`): a `PrometheusMetrics` sink for the
/// summary's request times and cache hit ratio and for `--metrics FILE`, and the log handler that prints the
/// library's warnings (and, with `--verbose`, its debug messages) on stderr.
final class RunMetrics: Sendable {
    let sink = PrometheusMetrics()
    let logHandler: ImagedlLogHandler
    /// `--metrics FILE` (`-`: stderr); nil: not written.
    let destination: String?

    init(options: DownloadOptions) {
        logHandler = ImagedlLogHandler(verbose: options.verbose)
        destination = options.metricsFile
    }

    /// The sink and the log handler on the downloader's configuration (and so on its HTTP cache).
    func configure(_ configuration: inout ImageDownloaderConfiguration) {
        configuration.metricsSink = sink
        configuration.logHandler = logHandler
    }

    /// "requests: 12, p50 8.1 ms, p95 41.0 ms; HTTP cache hit ratio 67% (2 of 3)": the request-time quantiles
    /// as Prometheus' histogram_quantile estimates them from the buckets, and the share of HTTP cache lookups
    /// answered from the cache (fresh, stale or revalidated). nil when no request was sent and no cache used.
    func summaryLine() -> String? {
        let name = ImageDownloaderMetricName.requestDuration
        let requests = Int(sink.total(name))
        var parts: [String] = []
        if requests > 0, let p50 = sink.quantile(0.5, of: name), let p95 = sink.quantile(0.95, of: name) {
            parts.append("requests: \(requests), p50 \(Formatting.duration(p50)), p95 \(Formatting.duration(p95))")
        }
        let lookups = Int(sink.total(ImageDownloaderMetricName.httpCacheLookups))
        if lookups > 0 {
            let misses = Int(sink.total(ImageDownloaderMetricName.httpCacheLookups, matching: ["result": "miss"]))
            let hits = lookups - misses
            parts.append("HTTP cache hit ratio \(Int((Double(hits) / Double(lookups) * 100).rounded()))% (\(hits) of \(lookups))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// `--metrics`: the exposition to the file (or stderr for `-`); an error message when it cannot be written.
    func write() -> String? {
        guard let destination else { return nil }
        let text = sink.exposition()
        if destination == "-" {
            Console.err(text)
            return nil
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: destination), options: .atomic)
            return nil
        } catch {
            return "imagedl: cannot write --metrics \(destination): \(error.localizedDescription)"
        }
    }
}

/// Prints the library's log messages on stderr as imagedl's own: warnings and errors always
/// ("imagedl: ..."), info and debug with `--verbose` ("imagedl: debug: ...").
final class ImagedlLogHandler: ImageDownloaderLogHandler {
    let logLevel: ImageDownloaderLogLevel
    private let write: @Sendable (String) -> Void

    init(verbose: Bool, write: @escaping @Sendable (String) -> Void = { Console.err($0) }) {
        logLevel = verbose ? .debug : .warning
        self.write = write
    }

    func log(
        level: ImageDownloaderLogLevel, message: String, metadata: [String: String], source: String, file: String,
        function: String, line: UInt
    ) {
        guard level >= logLevel else { return }
        write(level >= .warning ? "imagedl: \(message)\n" : "imagedl: \(level.rawValue): \(message)\n")
    }
}

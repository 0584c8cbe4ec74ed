import Foundation
import Decoding
import Synchronization

/// One downloader's observability: its metrics sink (with the handlers it reports through most, made once), its
/// tracer and its log hook. Made by the downloader only when the configuration sets one of them
/// (`make(configuration:)`): without, operations hold no observation at all and every report is one nil check.
final class DownloaderTelemetry: Sendable {
    let metrics: DownloaderMetrics?
    let tracer: (any ImageDownloaderTracer)?
    let logger: PackageLogger

    init(metrics: DownloaderMetrics?, tracer: (any ImageDownloaderTracer)?, logger: PackageLogger) {
        self.metrics = metrics
        self.tracer = tracer
        self.logger = logger
    }

    /// nil when the configuration sets no sink, tracer or log handler.
    static func make(configuration: ImageDownloaderConfiguration) -> DownloaderTelemetry? {
        guard configuration.metricsSink != nil || configuration.tracer != nil || configuration.logHandler != nil else { return nil }
        let metrics = configuration.metricsSink.map {
            DownloaderMetrics(
                sink: $0, serverAddressLimit: configuration.metricsServerAddressLimit,
                memoryCache: configuration.imageCache as? AutoPurgingImageCache)
        }
        return DownloaderTelemetry(
            metrics: metrics, tracer: configuration.tracer, logger: PackageLogger(handler: configuration.logHandler))
    }

    // MARK: - Reports of the downloader itself

    /// A caller was answered from the memory cache (no operation).
    func memoryCacheHit() {
        metrics?.download(.success, .memoryCache)
    }

    /// A caller joined the operation in flight for its URL.
    func callerJoined() {
        metrics?.coalescedCallers.increment(by: 1)
    }

    /// An image prefetcher's URL ended (`error` nil: succeeded).
    func prefetchEnded(error: (any Error)?) {
        guard let metrics else { return }
        let result = switch DownloadResult(error) {
        case .success: "succeeded"
        case .failure: "failed"
        case .cancelled: "cancelled"
        }
        metrics.counter(MetricName.prefetchedURLs, "result", result).increment(by: 1)
    }
}

typealias MetricName = ImageDownloaderMetricName

/// The handlers a downloader reports through, made once (those with fixed labels) or once per label value seen
/// (`counter(_:_:_:)`, `requestDuration`), so that a report is a dictionary lookup at most, never a new series
/// for the sink to find.
final class DownloaderMetrics: Sendable {
    let sink: any ImageDownloaderMetricsSink
    let queueDepth: any ImageDownloaderMeterHandler
    let coalescedCallers: any ImageDownloaderCounterHandler
    let resumedBytes: any ImageDownloaderCounterHandler
    let queueWait: any ImageDownloaderTimerHandler
    let sharedFetchWait: any ImageDownloaderTimerHandler
    let budgetWait: any ImageDownloaderTimerHandler
    let budgetInUse: any ImageDownloaderMeterHandler
    let budgetLimit: any ImageDownloaderMeterHandler
    let memoryCacheBytes: any ImageDownloaderMeterHandler
    /// The memory cache whose size `memoryCacheBytes` reports (only the package's own can tell).
    let memoryCache: AutoPurgingImageCache?
    /// `http_client_active_requests` and `http_client_request_duration_seconds`, per method, host and port.
    let endpoints: RequestEndpoints

    private let counters = Locked<[LabelledName: any ImageDownloaderCounterHandler]>([:])
    private let timers = Locked<[LabelledName: any ImageDownloaderTimerHandler]>([:])
    /// `od_downloads_total` by result and source, and `od_download_duration_seconds` by source: every report of
    /// a download, so found by index (made on first use) without a lock, not by hashing label text.
    private let downloads = LazySlots<any ImageDownloaderCounterHandler>(count: DownloadResult.allCases.count * DownloadSource.allCases.count)
    private let durations = LazySlots<any ImageDownloaderTimerHandler>(count: DownloadSource.allCases.count)

    init(sink: any ImageDownloaderMetricsSink, serverAddressLimit: Int, memoryCache: AutoPurgingImageCache?) {
        self.sink = sink
        queueDepth = sink.makeMeter(label: MetricName.queueDepth, dimensions: [])
        coalescedCallers = sink.makeCounter(label: MetricName.coalescedCallers, dimensions: [])
        resumedBytes = sink.makeCounter(label: MetricName.resumedBytes, dimensions: [])
        queueWait = sink.makeTimer(label: MetricName.queueWait, dimensions: [])
        sharedFetchWait = sink.makeTimer(label: MetricName.sharedFetchWait, dimensions: [])
        budgetWait = sink.makeTimer(label: MetricName.decodeBudgetWait, dimensions: [])
        budgetInUse = sink.makeMeter(label: MetricName.decodeBudgetBytes, dimensions: [("state", "in_use")])
        budgetLimit = sink.makeMeter(label: MetricName.decodeBudgetBytes, dimensions: [("state", "limit")])
        memoryCacheBytes = sink.makeMeter(label: MetricName.memoryCacheBytes, dimensions: [])
        self.memoryCache = memoryCache
        endpoints = RequestEndpoints(limit: serverAddressLimit, sink: sink)
    }

    /// A metric name with up to two label pairs, the key of the handlers made on first use.
    struct LabelledName: Hashable, Sendable {
        let name: String
        let first: String
        let firstValue: String
        var second = ""
        var secondValue = ""
    }

    /// The counter `name{label=value[,label2=value2]}`, made on first use.
    func counter(_ name: String, _ label: String, _ value: String, _ label2: String = "", _ value2: String = "") -> any ImageDownloaderCounterHandler {
        let key = LabelledName(name: name, first: label, firstValue: value, second: label2, secondValue: value2)
        if let made = counters.withLock({ $0[key] }) { return made }
        let dimensions = label2.isEmpty ? [(label, value)] : [(label, value), (label2, value2)]
        let made = sink.makeCounter(label: name, dimensions: dimensions)
        return counters.withLock { counters in
            if let raced = counters[key] { return raced }
            counters[key] = made
            return made
        }
    }

    /// The timer `name{label=value}`, made on first use.
    func timer(_ name: String, _ label: String, _ value: String) -> any ImageDownloaderTimerHandler {
        let key = LabelledName(name: name, first: label, firstValue: value)
        if let made = timers.withLock({ $0[key] }) { return made }
        let made = sink.makeTimer(label: name, dimensions: [(label, value)])
        return timers.withLock { timers in
            if let raced = timers[key] { return raced }
            timers[key] = made
            return made
        }
    }

    /// One caller answered.
    func download(_ result: DownloadResult, _ source: DownloadSource) {
        let index = result.rawValue * DownloadSource.allCases.count + source.rawValue
        downloads.value(index) {
            sink.makeCounter(label: MetricName.downloads, dimensions: [("result", result.label), ("source", source.label)])
        }.increment(by: 1)
    }

    /// `od_download_duration_seconds` of downloads whose bytes came from `source`.
    func downloadDuration(_ source: DownloadSource) -> any ImageDownloaderTimerHandler {
        durations.value(source.rawValue) {
            sink.makeTimer(label: MetricName.downloadDuration, dimensions: [("source", source.label)])
        }
    }

    /// The decode memory budget as it is now (sampled after each decode).
    func sampleDecodeBudget(_ budget: ImageDecodingBudget) {
        budgetInUse.set(Double(budget.reservedBytes))
        budgetLimit.set(Double(budget.limitBytes))
    }
}

/// Keeps `server_address` and `server_port` bounded: the first `limit` servers (host and port) a downloader
/// reports keep their names, later ones are reported as `_other` without a port (a crawler meets hosts and
/// ports without end).
final class ServerAddressLabels: Sendable {
    static let other = "_other"
    let limit: Int
    private let seen = Locked<Set<Server>>([])

    private struct Server: Hashable {
        let host: String
        let port: Int
    }

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// `host`, or `_other` once `limit` other servers have been reported.
    func label(_ host: String, port: Int) -> String {
        let server = Server(host: host, port: port)
        return seen.withLock { seen in
            if seen.contains(server) { return host }
            guard seen.count < limit else { return Self.other }
            seen.insert(server)
            return host
        }
    }
}

import Foundation
import Decoding
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one download operation reports (metrics, spans, trace context, log messages), at the operation's fixed
/// points: queued, started, each request (DownloadObservation+Requests.swift), retries, waits, decodes
/// (DownloadObservation+Decoding.swift), each caller's answer, the end. The operation holds one only when its
/// downloader has telemetry or its first caller gave a `traceParent`; every call site is then one line behind
/// a nil check.
final class DownloadObservation: Sendable {
    /// The downloader's sink, tracer and log hook; nil when only the trace context travels.
    let telemetry: DownloaderTelemetry?
    /// The caller's trace (the first caller's, for a coalesced download): every request carries it.
    let trace: ImageDownloaderTraceContext?
    /// The URL, for spans and log messages (never a metric label).
    let url: URL?
    /// Inside the object (no allocation of its own): what changes during the download.
    let state: Locked<State>

    struct State {
        /// Counted in `od_queue_depth` (queued, not started).
        var queued = false
        let createdAt = Monotonic.now()
        /// The request in flight.
        var hop: Hop?
        /// With a tracer only.
        var spans: Spans?
        /// Requests begun so far (`http.request.resend_count` of the next is this number).
        var requestsBegun = 0
        var sharedFetchWaitBegan: UInt64?
        /// Where the answer's bytes came from, known at the end (`od_downloads_total`'s `source`).
        var source = DownloadSource.network
        var ended = false
    }

    /// The spans of a download with a tracer.
    struct Spans {
        var download: (any ImageDownloaderSpan)?
        /// The request in flight's.
        var request: (any ImageDownloaderSpan)?
        /// Callers' traces that joined before the download span existed.
        var pendingLinks: [ImageDownloaderTraceContext] = []
    }

    init(telemetry: DownloaderTelemetry?, trace: ImageDownloaderTraceContext?, url: URL?) {
        self.telemetry = telemetry
        self.trace = trace
        self.url = url
        var state = State()
        if telemetry?.tracer != nil { state.spans = Spans() }
        self.state = Locked(state)
    }

    /// The operation's observation: nil without telemetry and without a valid `traceParent` (an invalid one is
    /// dropped, with a warning through the log hook).
    static func make(telemetry: DownloaderTelemetry?, context: ImageDownloaderContext, url: URL?) -> DownloadObservation? {
        var trace: ImageDownloaderTraceContext?
        if let text = context.traceParent {
            trace = ImageDownloaderTraceContext(traceParent: text, traceState: context.traceState)
            if trace == nil, let logger = telemetry?.logger {
                logger.log(.warning, "ignoring an invalid traceparent: \(text)", metadata: ["traceparent": text])
            }
        }
        guard telemetry != nil || trace != nil else { return nil }
        return DownloadObservation(telemetry: telemetry, trace: trace, url: url)
    }

    // MARK: - Queue and start

    /// Handed to the downloader's queue.
    func enqueued() {
        guard let metrics = telemetry?.metrics else { return }
        state.withLock { $0.queued = true }
        metrics.queueDepth.increment(by: 1)
    }

    /// `start()` ran (also for an operation cancelled before it started): it leaves the queue, and its span begins.
    func started() {
        let (wasQueued, createdAt, links) = state.withLock { state in
            defer { state.queued = false }
            return (state.queued, state.createdAt, state.spans?.pendingLinks ?? [])
        }
        if wasQueued, let metrics = telemetry?.metrics {
            metrics.queueDepth.decrement(by: 1)
            metrics.queueWait.record(seconds: Monotonic.seconds(since: createdAt))
        }
        guard let tracer = telemetry?.tracer else { return }
        let span = tracer.startSpan("image.download", parent: trace, ofKind: .internal, links: links)
        if let url { span.setAttribute(.string(url.absoluteString), forKey: "url.full") }
        // A caller that joined while the span was being made is in `pendingLinks` after the ones it was made with.
        let joinedMeanwhile: [ImageDownloaderTraceContext] = state.withLock { state in
            state.spans?.download = span
            let pending = state.spans?.pendingLinks ?? []
            state.spans?.pendingLinks = []
            return Array(pending.dropFirst(links.count))
        }
        for context in joinedMeanwhile { span.addLink(context) }
    }

    /// Another caller joined this download: its trace is linked to the download's span (the requests carry the
    /// first caller's trace).
    func callerJoined(trace joined: String?, traceState: String?) {
        guard telemetry?.tracer != nil, let joined, let context = ImageDownloaderTraceContext(traceParent: joined, traceState: traceState) else { return }
        let span: (any ImageDownloaderSpan)? = state.withLock { state in
            if state.spans?.download == nil { state.spans?.pendingLinks.append(context) }
            return state.spans?.download
        }
        span?.addLink(context)
    }

    // MARK: - Retries and waits

    /// The retry policy retries after `error` (`od_download_retries_total`).
    func retrying(after error: any Error, attempt: Int, delay: TimeInterval) {
        guard let telemetry else { return }
        let reason = MetricLabels.retryReason(error)
        telemetry.metrics?.counter(MetricName.retries, "reason", reason).increment(by: 1)
        telemetry.logger.log(
            .debug, "retrying \(url?.absoluteString ?? "a download") after attempt \(attempt) (\(reason)) in \(delay) s",
            metadata: ["reason": reason, "attempt": String(attempt), "url": url?.absoluteString ?? ""])
    }

    /// A retry resumed with a Range request: `bytes` were kept instead of fetched again.
    func resumed(bytes: Int) {
        guard bytes > 0 else { return }
        telemetry?.metrics?.resumedBytes.increment(by: Int64(bytes))
    }

    /// Waits for another download of the fleet to fetch this URL into the shared cache.
    func sharedFetchWaitBegan() {
        guard let telemetry else { return }
        let now = Monotonic.now()
        state.withLock { $0.sharedFetchWaitBegan = now }
        telemetry.logger.log(
            .debug, "waiting for another download of the fleet to fetch \(url?.absoluteString ?? "this URL") into the shared cache",
            metadata: ["url": url?.absoluteString ?? ""])
    }

    func sharedFetchWaitEnded() {
        guard let metrics = telemetry?.metrics else { return }
        let began: UInt64? = state.withLock { state in
            defer { state.sharedFetchWaitBegan = nil }
            return state.sharedFetchWaitBegan
        }
        if let began { metrics.sharedFetchWait.record(seconds: Monotonic.seconds(since: began)) }
    }

    // MARK: - The end

    /// What the end of a download tells (read from its metrics in one step).
    struct Ending {
        var source: ImageDownloadMetrics.Source
        var servedStale: Bool
        /// A start was recorded: the HTTP cache was consulted (a download cancelled before that looked up nothing).
        var started: Bool
        var attempts: Int
    }

    /// The download ends (before its callers are answered): a request still open ends with `error`, the HTTP
    /// cache lookup and the duration are counted, the download span ends.
    /// `httpCacheStorage`: the storage of the HTTP cache this download read (nil: none).
    func downloadEnded(error: (any Error)?, _ ending: Ending, httpCacheStorage: String?) {
        let source = DownloadSource(ending.source)
        let (span, first, created) = state.withLock { state in
            defer {
                state.ended = true
                state.source = source
            }
            return (state.spans?.download, !state.ended, state.createdAt)
        }
        guard first else { return }
        requestEnded(error: error, httpVersion: nil)
        if let metrics = telemetry?.metrics {
            if let storage = httpCacheStorage, ending.started {
                let result = MetricLabels.lookupResult(ending.source, servedStale: ending.servedStale)
                metrics.counter(MetricName.httpCacheLookups, "storage", storage, "result", result).increment(by: 1)
            }
            metrics.downloadDuration(source).record(seconds: Monotonic.seconds(since: created))
            if let cache = metrics.memoryCache { metrics.memoryCacheBytes.set(Double(cache.memoryUsage)) }
        }
        guard let span else { return }
        span.setAttribute(.string(source.label), forKey: "od.source")
        span.setAttribute(.int(Int64(ending.attempts)), forKey: "od.attempts")
        if let error {
            span.setAttribute(.string(MetricLabels.errorType(error)), forKey: "error.type")
            span.recordError(error)
            span.setStatus(.error(description: String(describing: error)))
        }
        span.end()
    }

    /// A caller answered (`error` nil: with its image): one count by result and by where the bytes came from; a
    /// failure by its type too.
    func answered(_ error: (any Error)?) {
        guard let metrics = telemetry?.metrics else { return }
        let source = state.withLock { $0.source }
        let result = DownloadResult(error)
        metrics.download(result, source)
        if let error, result == .failure {
            metrics.counter(MetricName.downloadErrors, "error_type", MetricLabels.errorType(error)).increment(by: 1)
        }
    }
}

/// The monotonic clock of durations (wall-clock changes never bend them).
enum Monotonic {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func seconds(since start: UInt64) -> Double {
        let now = now()
        return now > start ? Double(now - start) / 1e9 : 0
    }
}

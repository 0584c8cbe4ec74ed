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
    /// The telemetry's sink handlers and tracer, held here: every report reads one of them.
    let metrics: DownloaderMetrics?
    let tracer: (any ImageDownloaderTracer)?
    /// The caller's trace (the first caller's, for a coalesced download): every request carries it.
    let trace: ImageDownloaderTraceContext?
    /// The URL, for spans and log messages (never a metric label).
    let url: URL?
    /// The spans, with a tracer only (a download without one allocates no lock).
    let spans: Locked<Spans>?
    let createdAt = Monotonic.now()
    /// Counted in `od_queue_depth` (queued, not started).
    private let queued = Atomic<Bool>(false)
    /// Set once, by the end (`downloadEnded` reports only the first).
    private let ended = Atomic<Bool>(false)
    /// Where the answer's bytes came from (`DownloadSource`'s raw value), known at the end: `od_downloads_total`'s
    /// `source`, read by each caller's answer.
    private let source = Atomic<Int>(DownloadSource.network.rawValue)
    /// The request in flight (DownloadObservation+Requests.swift), in atomics rather than behind a lock: each
    /// request swaps them in and its end swaps them out, so it is observed once. Its endpoint, unretained (0:
    /// none): endpoints live in `metrics.endpoints`, which never drops one and which this object keeps alive.
    let hopEndpoint = Atomic<UInt>(0)
    /// When it began (`Monotonic`), and its status (0: none yet).
    let hopBegan = Atomic<UInt64>(0)
    let hopStatus = Atomic<Int>(0)
    /// When a wait for another process's fetch began (0: not waiting).
    private let sharedFetchWaitStart = Atomic<UInt64>(0)

    /// The spans of a download with a tracer.
    struct Spans {
        var download: (any ImageDownloaderSpan)?
        /// The request in flight's.
        var request: (any ImageDownloaderSpan)?
        /// Callers' traces that joined before the download span existed.
        var pendingLinks: [ImageDownloaderTraceContext] = []
        /// Requests begun so far (`http.request.resend_count` of the next is this number).
        var requestsBegun = 0
    }

    init(telemetry: DownloaderTelemetry?, trace: ImageDownloaderTraceContext?, url: URL?) {
        self.telemetry = telemetry
        metrics = telemetry?.metrics
        tracer = telemetry?.tracer
        self.trace = trace
        self.url = url
        spans = telemetry?.tracer == nil ? nil : Locked(Spans())
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
        guard let metrics = self.metrics else { return }
        queued.store(true, ordering: .relaxed)
        metrics.queueDepth.increment(by: 1)
    }

    /// `start()` ran (also for an operation cancelled before it started): it leaves the queue, and its span begins.
    func started() {
        if queued.exchange(false, ordering: .relaxed), let metrics = self.metrics {
            metrics.queueDepth.decrement(by: 1)
            metrics.queueWait.record(seconds: Monotonic.seconds(since: createdAt))
        }
        guard let tracer, let spans else { return }
        let links = spans.withLock { $0.pendingLinks }
        let span = tracer.startSpan("image.download", parent: trace, ofKind: .internal, links: links)
        if let url { span.setAttribute(.string(url.absoluteString), forKey: "url.full") }
        // A caller that joined while the span was being made is in `pendingLinks` after the ones it was made with.
        let joinedMeanwhile: [ImageDownloaderTraceContext] = spans.withLock { spans in
            spans.download = span
            let pending = spans.pendingLinks
            spans.pendingLinks = []
            return Array(pending.dropFirst(links.count))
        }
        for context in joinedMeanwhile { span.addLink(context) }
    }

    /// Another caller joined this download: its trace is linked to the download's span (the requests carry the
    /// first caller's trace).
    func callerJoined(trace joined: String?, traceState: String?) {
        guard let spans, let joined, let context = ImageDownloaderTraceContext(traceParent: joined, traceState: traceState) else { return }
        let span: (any ImageDownloaderSpan)? = spans.withLock { spans in
            if spans.download == nil { spans.pendingLinks.append(context) }
            return spans.download
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
        self.metrics?.resumedBytes.increment(by: Int64(bytes))
    }

    /// Waits for another download of the fleet to fetch this URL into the shared cache.
    func sharedFetchWaitBegan() {
        guard let telemetry else { return }
        sharedFetchWaitStart.store(Monotonic.now(), ordering: .relaxed)
        telemetry.logger.log(
            .debug, "waiting for another download of the fleet to fetch \(url?.absoluteString ?? "this URL") into the shared cache",
            metadata: ["url": url?.absoluteString ?? ""])
    }

    func sharedFetchWaitEnded() {
        guard let metrics = self.metrics else { return }
        let began = sharedFetchWaitStart.exchange(0, ordering: .relaxed)
        if began != 0 { metrics.sharedFetchWait.record(seconds: Monotonic.seconds(since: began)) }
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
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        let source = DownloadSource(ending.source)
        self.source.store(source.rawValue, ordering: .relaxed)
        // The request still open ends with the download.
        let (requestSpan, span) = spans?.withLock { ($0.request.take(), $0.download) } ?? (nil, nil)
        let now = Monotonic.now()
        endHop(requestSpan, error: error, httpVersion: nil, now: now)
        if let metrics = self.metrics {
            if let storage = httpCacheStorage, ending.started {
                let result = MetricLabels.lookupResult(ending.source, servedStale: ending.servedStale)
                metrics.counter(MetricName.httpCacheLookups, "storage", storage, "result", result).increment(by: 1)
            }
            metrics.downloadDuration(source).record(seconds: Monotonic.seconds(from: createdAt, to: now))
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
        guard let metrics = self.metrics else { return }
        let source = DownloadSource(rawValue: self.source.load(ordering: .relaxed)) ?? .network
        let result = DownloadResult(error)
        metrics.download(result, source)
        if let error, result == .failure {
            metrics.counter(MetricName.downloadErrors, "error_type", MetricLabels.errorType(error)).increment(by: 1)
        }
    }
}

/// The monotonic clock of durations (wall-clock changes never bend them). On Linux it is read directly:
/// `DispatchTime.now()` reads the same clock through libdispatch's conversion.
enum Monotonic {
    static func now() -> UInt64 {
        #if os(Linux)
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
        #else
        DispatchTime.now().uptimeNanoseconds
        #endif
    }

    static func seconds(since start: UInt64) -> Double {
        seconds(from: start, to: now())
    }

    /// The seconds from `start` to `end` (0 if `end` is not later).
    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        end > start ? Double(end - start) / 1e9 : 0
    }
}

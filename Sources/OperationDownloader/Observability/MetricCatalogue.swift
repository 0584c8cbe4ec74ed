import Foundation

/// Every metric the package reports: name, kind, help text and histogram buckets. Docs/Observability.md has the
/// same table with the labels and what each means (a test checks they agree). `PrometheusMetrics` takes its HELP
/// lines and buckets from here.
public enum ImageDownloaderMetricName {
    /// What kind of metric a name is.
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// One metric of the package.
    public struct Definition: Sendable {
        public let name: String
        public let kind: Kind
        public let help: String
        /// Histograms only: upper bounds in seconds (`+Inf` is added by the exposition).
        public let buckets: [Double]
    }

    /// OpenTelemetry's advised buckets for `http.client.request.duration` (seconds).
    public static let requestDurationBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
    /// Decodes take milliseconds to seconds.
    public static let decodeDurationBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Waits (queue, decode budget, another process's fetch) may last up to the lock timeout of a fleet.
    public static let waitBuckets: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    // OpenTelemetry's HTTP client conventions, in their Prometheus form.
    public static let requestDuration = "http_client_request_duration_seconds"
    public static let activeRequests = "http_client_active_requests"
    // The package's own.
    public static let downloads = "od_downloads_total"
    public static let downloadErrors = "od_download_errors_total"
    public static let downloadDuration = "od_download_duration_seconds"
    public static let queueWait = "od_queue_wait_seconds"
    public static let retries = "od_download_retries_total"
    public static let resumedBytes = "od_resumed_bytes_total"
    public static let decodeDuration = "od_decode_duration_seconds"
    public static let decodeBudgetBytes = "od_decode_budget_bytes"
    public static let decodeBudgetWait = "od_decode_budget_wait_seconds"
    public static let decodeBudgetRefusals = "od_decode_budget_refusals_total"
    public static let httpCacheLookups = "od_http_cache_lookups_total"
    public static let httpCacheWriteFailures = "od_http_cache_write_failures_total"
    public static let sharedFetchWait = "od_shared_fetch_wait_seconds"
    public static let redisErrors = "od_redis_errors_total"
    public static let redisBreakerOpen = "od_redis_breaker_open"
    public static let queueDepth = "od_queue_depth"
    public static let coalescedCallers = "od_coalesced_callers_total"
    public static let memoryCacheBytes = "od_memory_cache_bytes"
    public static let prefetchedURLs = "od_prefetch_urls_total"

    /// Every metric, in the order the exposition lists them.
    public static let all: [Definition] = [
        .init(name: requestDuration, kind: .histogram, help: "Duration of HTTP client requests, one per request sent (retries, redirects and revalidations each count).", buckets: requestDurationBuckets),
        .init(name: activeRequests, kind: .gauge, help: "Number of HTTP client requests in flight.", buckets: []),
        .init(name: downloads, kind: .counter, help: "Downloads answered, one per caller, by result and by where the image came from.", buckets: []),
        .init(name: downloadErrors, kind: .counter, help: "Downloads that failed, one per caller, by error type.", buckets: []),
        .init(name: downloadDuration, kind: .histogram, help: "Time from a download's queueing to its answer (transfer and decode), one per download operation.", buckets: requestDurationBuckets),
        .init(name: queueWait, kind: .histogram, help: "Time download operations waited in the downloader's queue before starting.", buckets: waitBuckets),
        .init(name: retries, kind: .counter, help: "Attempts retried by the retry policy, by the failure that caused them.", buckets: []),
        .init(name: resumedBytes, kind: .counter, help: "Body bytes not fetched again because a retry resumed with a Range request.", buckets: []),
        .init(name: decodeDuration, kind: .histogram, help: "Duration of final image decodes (one per variant), without the wait for the decode memory budget.", buckets: decodeDurationBuckets),
        .init(name: decodeBudgetBytes, kind: .gauge, help: "The process's decode memory budget: bytes reserved by decodes in flight (state=in_use) and the limit (state=limit).", buckets: []),
        .init(name: decodeBudgetWait, kind: .histogram, help: "Time decodes waited for room in the decode memory budget (only decodes that waited).", buckets: waitBuckets),
        .init(name: decodeBudgetRefusals, kind: .counter, help: "Decodes refused by the decode memory budget: the image needs more than the whole budget.", buckets: []),
        .init(name: httpCacheLookups, kind: .counter, help: "HTTP cache lookups, one per download that used the HTTP cache, by storage and result.", buckets: []),
        .init(name: httpCacheWriteFailures, kind: .counter, help: "Responses the HTTP cache could not store (directory not writable, Redis refusing writes).", buckets: []),
        .init(name: sharedFetchWait, kind: .histogram, help: "Time downloads waited for another download of the fleet to fetch the same URL into the shared cache.", buckets: waitBuckets),
        .init(name: redisErrors, kind: .counter, help: "Errors talking to the Redis HTTP cache, by kind.", buckets: []),
        .init(name: redisBreakerOpen, kind: .gauge, help: "Redis HTTP caches whose circuit breaker is open (Redis bypassed).", buckets: []),
        .init(name: queueDepth, kind: .gauge, help: "Download operations queued and not started.", buckets: []),
        .init(name: coalescedCallers, kind: .counter, help: "Callers that joined a download already in flight for the same URL instead of starting one.", buckets: []),
        .init(name: memoryCacheBytes, kind: .gauge, help: "Bytes of decoded images held by the downloader's memory cache.", buckets: []),
        .init(name: prefetchedURLs, kind: .counter, help: "URLs ended by image prefetchers, by result.", buckets: []),
    ]

    /// The definition of `name`, or nil for a name the package does not report.
    public static func definition(of name: String) -> Definition? {
        byName[name]
    }

    private static let byName: [String: Definition] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
}

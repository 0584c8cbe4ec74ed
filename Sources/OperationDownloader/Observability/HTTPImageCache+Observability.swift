import Foundation

extension HTTPImageCache {
    /// Where this cache reports its own events (`od_redis_errors_total`, `od_redis_breaker_open`,
    /// `od_http_cache_write_failures_total`). nil: the sink of the first downloader configured with one that uses
    /// this cache (set when that downloader is made). Lookups are reported by each download, to its own
    /// downloader's sink.
    public var metricsSink: (any ImageDownloaderMetricsSink)? {
        get { store.telemetry.sink }
        set { store.telemetry.sink = newValue }
    }

    /// Where this cache's log messages go (Redis unavailable, back, refusing writes; the directory not writable).
    /// nil: the log handler of the first downloader configured with one that uses this cache; without any,
    /// warnings go to `warningHandler`, else standard error.
    public var logHandler: (any ImageDownloaderLogHandler)? {
        get { store.telemetry.logHandler }
        set { store.telemetry.logHandler = newValue }
    }

    /// A downloader's sink and log handler, kept where the cache has none of its own.
    func adoptTelemetry(sink: (any ImageDownloaderMetricsSink)?, logHandler: (any ImageDownloaderLogHandler)?) {
        store.telemetry.adopt(sink: sink, logHandler: logHandler)
    }
}

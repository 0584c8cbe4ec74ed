import Foundation

extension HTTPImageCache {
    /// Where this cache reports its own events (`od_redis_errors_total`, `od_redis_breaker_open`,
    /// `od_http_cache_write_failures_total`). nil: the sink of the first downloader configured with one that uses
    /// this cache (set when that downloader is made). Lookups are reported by each download, to its own
    /// downloader's sink.
    public var metricsSink: (any ImageDownloaderMetricsSink)? {
        get { layer.telemetry.sink }
        set {
            layer.telemetry.sink = newValue
            // A tiered cache's Redis connections report through their own cache.
            for tier in tierCaches { tier.metricsSink = newValue }
        }
    }

    /// Where this cache's log messages go (Redis unavailable, back, refusing writes; the directory not writable).
    /// nil: the log handler of the first downloader configured with one that uses this cache; without any,
    /// warnings go to `warningHandler`, else standard error.
    public var logHandler: (any ImageDownloaderLogHandler)? {
        get { layer.telemetry.logHandler }
        set {
            layer.telemetry.logHandler = newValue
            for tier in tierCaches { tier.logHandler = newValue }
        }
    }

    /// The `storage` label of this cache's lookups (`od_http_cache_lookups_total`): its tiers' storages, nearest
    /// first (`directory`, `redis`; `directory+redis` for a tiered cache).
    var storageLabel: String {
        let tiers = layer.tiers
        return tiers.count == 1 ? tiers[0].storage : tiers.map(\.storage).joined(separator: "+")
    }

    /// A downloader's sink and log handler, kept where the cache has none of its own.
    func adoptTelemetry(sink: (any ImageDownloaderMetricsSink)?, logHandler: (any ImageDownloaderLogHandler)?) {
        layer.telemetry.adopt(sink: sink, logHandler: logHandler)
        for tier in tierCaches { tier.adoptTelemetry(sink: sink, logHandler: logHandler) }
    }
}

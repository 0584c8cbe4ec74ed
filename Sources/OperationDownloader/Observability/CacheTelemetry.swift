import Foundation

/// An HTTP cache's own reports (its storage's events, not a download's): Redis errors and the breaker, writes
/// that fail, and its warnings and log messages. One per cache, made before its layer and its Redis connections
/// so that both report through it. Its sink and log handler are the cache's (`HTTPImageCache.metricsSink`,
/// `.logHandler`), which a downloader sets from its configuration when the cache has none. Without a log
/// handler, warnings go to `warningHandler`, else standard error, as before.
final class CacheTelemetry: Sendable {
    private let state = Locked(State())

    private struct State {
        var sink: (any ImageDownloaderMetricsSink)?
        var logHandler: (any ImageDownloaderLogHandler)?
        var warningHandler: (@Sendable (String) -> Void)?
        /// Handlers made from `sink`, by name and label value.
        var counters: [String: any ImageDownloaderCounterHandler] = [:]
        var breakerOpen: (any ImageDownloaderMeterHandler)?
        /// This cache's open breaker is counted in `breakerOpen`.
        var breakerCounted = false
    }

    var sink: (any ImageDownloaderMetricsSink)? {
        get { state.withLock { $0.sink } }
        set {
            state.withLock {
                $0.sink = newValue
                $0.counters = [:]
                $0.breakerOpen = nil
                $0.breakerCounted = false
            }
        }
    }

    var logHandler: (any ImageDownloaderLogHandler)? {
        get { state.withLock { $0.logHandler } }
        set { state.withLock { $0.logHandler = newValue } }
    }

    /// `HTTPImageCache.warningHandler`: where warnings go without a log handler (nil: standard error).
    var warningHandler: (@Sendable (String) -> Void)? {
        get { state.withLock { $0.warningHandler } }
        set { state.withLock { $0.warningHandler = newValue } }
    }

    /// Takes a downloader's sink and log handler where the cache has none of its own.
    func adopt(sink: (any ImageDownloaderMetricsSink)?, logHandler: (any ImageDownloaderLogHandler)?) {
        state.withLock { state in
            if state.sink == nil, let sink { state.sink = sink }
            if state.logHandler == nil, let logHandler { state.logHandler = logHandler }
        }
    }

    var logger: PackageLogger {
        state.withLock { PackageLogger(handler: $0.logHandler, fallback: $0.warningHandler) }
    }

    // MARK: - Reports

    /// An error talking to Redis: `connect`, `timeout`, `io`, `auth`, `reply` (the server answered with an error).
    func redisError(_ kind: String) {
        counter(MetricName.redisErrors, label: "kind", value: kind)?.increment(by: 1)
    }

    /// The Redis breaker opened (`opened` true: an outage begins) or closed again.
    func redisBreaker(opened: Bool) {
        let meter: (any ImageDownloaderMeterHandler)? = state.withLock { state in
            // Counted once per outage, so caches sharing a sink add up and a close never goes below zero.
            guard let sink = state.sink, state.breakerCounted != opened else { return nil }
            state.breakerCounted = opened
            if state.breakerOpen == nil { state.breakerOpen = sink.makeMeter(label: MetricName.redisBreakerOpen, dimensions: []) }
            return state.breakerOpen
        }
        if opened { meter?.increment(by: 1) } else { meter?.decrement(by: 1) }
    }

    /// A response could not be stored in the tier `storage` (`directory` not writable, `redis` refusing writes).
    func writeFailed(storage: String) {
        counter(MetricName.httpCacheWriteFailures, label: "storage", value: storage)?.increment(by: 1)
    }

    private func counter(_ name: String, label: String, value: String) -> (any ImageDownloaderCounterHandler)? {
        state.withLock { state in
            guard let sink = state.sink else { return nil }
            let key = name + "\u{0}" + value
            if let made = state.counters[key] { return made }
            let made = sink.makeCounter(label: name, dimensions: [(label, value)])
            state.counters[key] = made
            return made
        }
    }
}

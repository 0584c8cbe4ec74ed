import Foundation

/// Where the package reports its metrics (Docs/Observability.md lists every name, type, unit and label): set one
/// on `ImageDownloaderConfiguration.metricsSink`. `PrometheusMetrics` is the built-in sink; anything else is a few
/// lines over this protocol.
///
/// Shaped like swift-metrics' `MetricsFactory` (its `makeCounter`, `makeMeter` and `makeTimer` with `label` and
/// `dimensions`, and the handlers they return), so an adapter to swift-metrics forwards each call:
///
/// ```swift
/// struct SwiftMetricsSink: ImageDownloaderMetricsSink {
///     func makeCounter(label: String, dimensions: [(String, String)]) -> any ImageDownloaderCounterHandler {
///         Counter(MetricsSystem.factory.makeCounter(label: label, dimensions: dimensions))
///     }
///     // makeMeter, makeTimer alike
/// }
/// ```
///
/// The package asks for a handler each time it reports under label values it has not cached itself (a new
/// host, a new status): a sink should return the same handler for the same label and dimensions, as
/// swift-metrics' backends and `PrometheusMetrics` do. Label values are bounded (Docs/Observability.md, "Labels"):
/// never a URL.
public protocol ImageDownloaderMetricsSink: Sendable {
    /// A monotonically increasing count (Prometheus counter; names end in `_total`).
    func makeCounter(label: String, dimensions: [(String, String)]) -> any ImageDownloaderCounterHandler
    /// A value that goes up and down (Prometheus gauge; swift-metrics' `Meter`).
    func makeMeter(label: String, dimensions: [(String, String)]) -> any ImageDownloaderMeterHandler
    /// Durations (Prometheus histogram in seconds; names end in `_seconds`).
    func makeTimer(label: String, dimensions: [(String, String)]) -> any ImageDownloaderTimerHandler
}

/// A counter (swift-metrics' `CounterHandler`).
public protocol ImageDownloaderCounterHandler: AnyObject, Sendable {
    func increment(by amount: Int64)
    func reset()
}

/// A gauge (swift-metrics' `MeterHandler`).
public protocol ImageDownloaderMeterHandler: AnyObject, Sendable {
    func set(_ value: Double)
    func increment(by amount: Double)
    func decrement(by amount: Double)
}

/// A duration histogram (swift-metrics' `TimerHandler`).
public protocol ImageDownloaderTimerHandler: AnyObject, Sendable {
    func recordNanoseconds(_ duration: Int64)
}

extension ImageDownloaderTimerHandler {
    /// Records `seconds` (negative or not finite: nothing).
    func record(seconds: Double) {
        guard seconds.isFinite, seconds >= 0 else { return }
        recordNanoseconds(Int64(min(seconds, 1e9) * 1e9))
    }
}

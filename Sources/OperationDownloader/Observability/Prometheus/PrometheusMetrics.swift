import Foundation

/// The built-in metrics sink: keeps every counter, gauge and histogram in memory and renders them in the
/// Prometheus text exposition format (version 0.0.4), which `promtool check metrics` accepts. Serve
/// `exposition()` at `/metrics` (Docs/Observability.md has a compiled example) or write it to a file at the end
/// of a run (imagedl `--metrics FILE`).
///
/// Updates are cheap and safe from any thread: each series has its own small lock; the registry's lock is held
/// only to find or add a series, and rendering copies the list of series first, so no lock is held across it.
/// Durations become histograms in seconds, with the package's buckets per name (OpenTelemetry's advised
/// buckets for `http_client_request_duration_seconds`, `ImageDownloaderMetricName`), or `buckets` given here.
public final class PrometheusMetrics: ImageDownloaderMetricsSink {
    /// One series' identity: the family name and its labels, sanitised, in the order given.
    struct SeriesKey: Hashable, Sendable {
        let name: String
        let labels: [Label]
    }

    struct Label: Hashable, Sendable {
        let name: String
        let value: String
    }

    struct Family: Sendable {
        let kind: ImageDownloaderMetricName.Kind
        let help: String
        let upperBounds: [Double]
        /// Its series, in creation order.
        var series: [(labels: [Label], series: PrometheusSeries)] = []
    }

    private struct Registry {
        var families: [String: Family] = [:]
        /// Family names in creation order.
        var order: [String] = []
        var series: [SeriesKey: PrometheusSeries] = [:]
        /// Every series object as a plain reference: `PrometheusSeries` keeps its case in the reference's spare
        /// bits, which LeakSanitizer cannot follow (it reported every gauge and histogram as leaked).
        var objects: [AnyObject] = []
    }

    private let registry = Locked(Registry())
    private let bucketOverrides: [String: [Double]]

    /// - Parameter buckets: histogram upper bounds (seconds) by metric name, replacing the package's.
    public init(buckets: [String: [Double]] = [:]) {
        bucketOverrides = buckets.mapValues(Self.normalised)
    }

    // MARK: - ImageDownloaderMetricsSink

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any ImageDownloaderCounterHandler {
        if case .counter(let counter) = series(label, dimensions, kind: .counter) { return counter }
        return PrometheusCounter()  // the name is another kind's: counted, never shown
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any ImageDownloaderMeterHandler {
        if case .gauge(let gauge) = series(label, dimensions, kind: .gauge) { return gauge }
        return PrometheusGauge()
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any ImageDownloaderTimerHandler {
        if case .histogram(let histogram) = series(label, dimensions, kind: .histogram) { return histogram }
        return PrometheusHistogram(upperBounds: [])
    }

    // MARK: - Reading

    /// The text exposition format: for each metric its `# HELP` and `# TYPE` lines, then its series
    /// (`_bucket`, `_sum` and `_count` for histograms), label values escaped.
    public func exposition() -> String {
        PrometheusExposition.render(families())
    }

    /// The sum of the series of counter or gauge `name` whose labels include every pair of `matching` (a
    /// histogram: its observation count); 0 when none.
    public func total(_ name: String, matching: [String: String] = [:]) -> Double {
        guard let family = families().first(where: { $0.name == name })?.family else { return 0 }
        var sum = 0.0
        for (labels, series) in family.series where matching.allSatisfy({ pair in labels.contains { $0.name == pair.key && $0.value == pair.value } }) {
            switch series {
            case .counter(let counter): sum += Double(counter.current)
            case .gauge(let gauge): sum += gauge.current
            case .histogram(let histogram): sum += Double(histogram.snapshot.count)
            }
        }
        return sum
    }

    /// An estimate of the `q`-quantile (0...1) of histogram `name` over all its series, as Prometheus'
    /// `histogram_quantile` makes it: linear inside the bucket the rank falls in (the highest finite bound when
    /// it falls beyond). nil without observations.
    public func quantile(_ q: Double, of name: String) -> Double? {
        guard let family = families().first(where: { $0.name == name })?.family, family.kind == .histogram else { return nil }
        var counts = Array(repeating: UInt64(0), count: family.upperBounds.count + 1)
        for (_, series) in family.series {
            guard case .histogram(let histogram) = series else { continue }
            for (i, count) in histogram.snapshot.counts.enumerated() where i < counts.count { counts[i] &+= count }
        }
        return PrometheusExposition.quantile(q, upperBounds: family.upperBounds, counts: counts)
    }

    // MARK: - The registry

    /// The families in the order the exposition lists them: the package's catalogue order, then others by creation.
    private func families() -> [(name: String, family: Family)] {
        let (families, order) = registry.withLock { ($0.families, $0.order) }
        let known = ImageDownloaderMetricName.all.compactMap { definition in families[definition.name].map { (definition.name, $0) } }
        let others = order.filter { ImageDownloaderMetricName.definition(of: $0) == nil }.compactMap { name in families[name].map { (name, $0) } }
        return known + others
    }

    private func series(_ label: String, _ dimensions: [(String, String)], kind: ImageDownloaderMetricName.Kind) -> PrometheusSeries? {
        var labels: [Label] = []
        labels.reserveCapacity(dimensions.count)
        for (name, value) in dimensions {
            var name = PrometheusExposition.labelName(name)
            if kind == .histogram && name == "le" { name = "_le" }  // `le` is the bucket's
            if !labels.contains(where: { $0.name == name }) { labels.append(Label(name: name, value: value)) }
        }
        let key = SeriesKey(name: PrometheusExposition.metricName(label), labels: labels)
        if let found = registry.withLock({ $0.series[key] }) { return found }
        let definition = ImageDownloaderMetricName.definition(of: key.name)
        let bounds = bucketOverrides[key.name] ?? definition?.buckets ?? ImageDownloaderMetricName.requestDurationBuckets
        return registry.withLock { registry in
            if let found = registry.series[key] { return found }  // made meanwhile by another thread
            if registry.families[key.name] == nil {
                registry.families[key.name] = Family(
                    kind: kind, help: definition?.help ?? "\(key.name) (reported through OperationDownloader)",
                    upperBounds: kind == .histogram ? bounds : [])
                registry.order.append(key.name)
            }
            guard let family = registry.families[key.name], family.kind == kind else { return nil }
            let made: PrometheusSeries = switch kind {
            case .counter: .counter(PrometheusCounter())
            case .gauge: .gauge(PrometheusGauge())
            case .histogram: .histogram(PrometheusHistogram(upperBounds: family.upperBounds))
            }
            registry.series[key] = made
            registry.objects.append(made.object)
            registry.families[key.name]?.series.append((key.labels, made))
            return made
        }
    }

    /// Sorted, finite, positive, without duplicates.
    private static func normalised(_ bounds: [Double]) -> [Double] {
        Array(Set(bounds.filter { $0.isFinite && $0 > 0 })).sorted()
    }
}

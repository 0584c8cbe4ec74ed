import Foundation
import Testing
import TestRequirements
@testable import OperationDownloader

/// The built-in sink's text: the format Prometheus parses (read back here by `Exposition`, and by promtool),
/// exact values, escaping, and updates from many threads while it renders.
@Suite struct PrometheusMetricsTests {
    @Test func countersGaugesAndHistogramsRenderAsTheFormatSays() throws {
        let metrics = PrometheusMetrics()
        metrics.makeCounter(label: "od_downloads_total", dimensions: [("result", "success"), ("source", "network")]).increment(by: 3)
        let gauge = metrics.makeMeter(label: "od_queue_depth", dimensions: [])
        gauge.increment(by: 5)
        gauge.decrement(by: 2)
        let timer = metrics.makeTimer(label: "http_client_request_duration_seconds", dimensions: [("http_request_method", "GET")])
        for milliseconds in [3, 7, 40, 90, 2000, 20_000] { timer.recordNanoseconds(Int64(milliseconds) * 1_000_000) }
        let text = metrics.exposition()
        let parsed = try Exposition(text)
        #expect(parsed.types["od_downloads_total"] == "counter")
        #expect(parsed.types["od_queue_depth"] == "gauge")
        #expect(parsed.types["http_client_request_duration_seconds"] == "histogram")
        #expect(parsed.helps["od_downloads_total"] == ImageDownloaderMetricName.definition(of: "od_downloads_total")?.help)
        #expect(parsed.value("od_downloads_total", ["result": "success", "source": "network"]) == 3)
        #expect(parsed.value("od_queue_depth") == 3)
        let name = "http_client_request_duration_seconds"
        // OpenTelemetry's advised buckets, cumulative; 20 s is beyond the last and counts only in +Inf.
        let expected: [(String, Double)] = [("0.005", 1), ("0.01", 2), ("0.025", 2), ("0.05", 3), ("0.075", 3), ("0.1", 4),
                                            ("0.25", 4), ("0.5", 4), ("0.75", 4), ("1", 4), ("2.5", 5), ("5", 5), ("7.5", 5),
                                            ("10", 5), ("+Inf", 6)]
        for (le, count) in expected {
            #expect(parsed.value(name + "_bucket", ["http_request_method": "GET", "le": le]) == count, "le=\(le)")
        }
        #expect(parsed.value(name + "_count", ["http_request_method": "GET"]) == 6)
        let sum = try #require(parsed.value(name + "_sum", ["http_request_method": "GET"]))
        #expect(abs(sum - 22.14) < 1e-9)
        // HELP and TYPE come once per family, before its samples, and the package's families in catalogue order.
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("# TYPE ") }.count == 3)
        #expect(lines.first == "# HELP \(name) \(ImageDownloaderMetricName.definition(of: name)?.help ?? "")")
    }

    @Test func labelValuesAndHelpAreEscapedAndReadBackIntact() throws {
        let metrics = PrometheusMetrics()
        let hostile = "a\"b\\c\nd}{,=é"
        metrics.makeCounter(label: "custom.name-with dots", dimensions: [("label.one", hostile), ("9lives", "x")]).increment(by: 1)
        let text = metrics.exposition()
        #expect(text.contains("custom_name_with_dots{label_one=\"a\\\"b\\\\c\\nd}{,=é\",_9lives=\"x\"} 1"), "\(text)")
        let parsed = try Exposition(text)
        #expect(parsed.value("custom_name_with_dots", ["label_one": hostile, "_9lives": "x"]) == 1)
        #expect(PrometheusExposition.escapedHelp("a\\b\nc") == "a\\\\b\\nc")
    }

    @Test func numbersAreWrittenAsPrometheusReadsThem() {
        #expect(PrometheusExposition.number(3) == "3")
        #expect(PrometheusExposition.number(-2) == "-2")
        #expect(PrometheusExposition.number(0.25) == "0.25")
        #expect(PrometheusExposition.number(.infinity) == "+Inf")
        #expect(PrometheusExposition.number(-.infinity) == "-Inf")
        #expect(PrometheusExposition.number(.nan) == "NaN")
        #expect(Double(PrometheusExposition.number(1e-7)) == 1e-7)
    }

    /// The same label set is one series; a name keeps the kind it was first made with (another kind's handler
    /// works but is not shown); repeated label names keep the first.
    @Test func oneSeriesPerLabelSetAndOneKindPerName() throws {
        let metrics = PrometheusMetrics()
        let a = metrics.makeCounter(label: "x_total", dimensions: [("k", "v")])
        let b = metrics.makeCounter(label: "x_total", dimensions: [("k", "v")])
        #expect(a === b)
        a.increment(by: 2)
        b.increment(by: 3)
        b.increment(by: -7)  // a counter never goes down
        metrics.makeMeter(label: "x_total", dimensions: []).set(99)
        metrics.makeCounter(label: "y_total", dimensions: [("k", "1"), ("k", "2")]).increment(by: 1)
        let parsed = try Exposition(metrics.exposition())
        #expect(parsed.value("x_total", ["k": "v"]) == 5)
        #expect(parsed.series("x_total").count == 1)
        #expect(parsed.value("y_total", ["k": "1"]) == 1)
        a.reset()
        #expect(try Exposition(metrics.exposition()).value("x_total", ["k": "v"]) == 0)
    }

    /// Eight threads update (new series included) while two others render: every increment counts, every
    /// rendering parses.
    @Test func concurrentUpdatesAndRenderingsAreExact() throws {
        let metrics = PrometheusMetrics()
        let renderings = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 10) { worker in
            if worker >= 8 {
                for _ in 0..<20 { renderings.withLock { $0.append(metrics.exposition()) } }
                return
            }
            for i in 0..<5000 {
                metrics.makeCounter(label: "od_downloads_total", dimensions: [("result", "success"), ("source", "network")]).increment(by: 1)
                metrics.makeTimer(label: "od_decode_duration_seconds", dimensions: [("format", "f\(i % 7)")]).recordNanoseconds(1_000_000)
                metrics.makeMeter(label: "od_queue_depth", dimensions: []).increment(by: 1)
                let inUse = metrics.makeMeter(label: "od_decode_budget_bytes", dimensions: [("state", "in_use")])
                inUse.increment(by: 1.5)
                inUse.decrement(by: 1)
            }
        }
        for text in renderings.current { _ = try Exposition(text) }
        let parsed = try Exposition(metrics.exposition())
        #expect(parsed.value("od_downloads_total", ["result": "success", "source": "network"]) == 40_000)
        #expect(parsed.total("od_decode_duration_seconds_count") == 40_000)
        #expect(parsed.value("od_queue_depth") == 40_000)
        #expect(parsed.value("od_decode_budget_bytes", ["state": "in_use"]) == 20_000)
        // Each series' sum gains every observation: 40,000 of a millisecond (a lost update would miss 1 ms).
        #expect(abs(parsed.total("od_decode_duration_seconds_sum") - 40) < 1e-6)
        #expect(metrics.total("od_decode_duration_seconds") == 40_000)
    }

    /// `quantile` is Prometheus' histogram_quantile: linear inside the bucket.
    @Test func quantileInterpolatesInsideTheBucket() {
        let metrics = PrometheusMetrics(buckets: ["t_seconds": [1, 2, 4]])
        let timer = metrics.makeTimer(label: "t_seconds", dimensions: [("a", "1")])
        let other = metrics.makeTimer(label: "t_seconds", dimensions: [("a", "2")])
        for _ in 0..<10 { timer.recordNanoseconds(500_000_000) }       // 10 in (0, 1]
        for _ in 0..<10 { other.recordNanoseconds(1_500_000_000) }     // 10 in (1, 2]
        #expect(metrics.quantile(0.5, of: "t_seconds") == 1)
        #expect(metrics.quantile(0.75, of: "t_seconds") == 1.5)
        #expect(metrics.quantile(0.25, of: "t_seconds") == 0.5)
        #expect(metrics.quantile(0.5, of: "nothing") == nil)
        other.recordNanoseconds(60_000_000_000)  // beyond the last bound: the highest finite bound
        #expect(metrics.quantile(1, of: "t_seconds") == 4)
    }

    /// promtool accepts the text, lint included (names, suffixes, HELP), with every kind and escaped labels.
    @Test(.requires(.promtool)) func promtoolAcceptsTheExposition() throws {
        let metrics = PrometheusMetrics()
        metrics.makeCounter(label: MetricName.downloads, dimensions: [("result", "success"), ("source", "memory_cache")]).increment(by: 1)
        metrics.makeCounter(label: MetricName.redisErrors, dimensions: [("kind", "odd \"value\"\n")]).increment(by: 1)
        metrics.makeMeter(label: MetricName.decodeBudgetBytes, dimensions: [("state", "in_use")]).set(1_048_576)
        metrics.makeTimer(label: MetricName.requestDuration, dimensions: [("server_address", "a.test")]).recordNanoseconds(12_000_000)
        let outcome = try Promtool.check(metrics.exposition())
        #expect(outcome.status == 0 && outcome.output.isEmpty, "\(outcome.output)")
        // And it does reject what is wrong: the check is not a formality.
        let broken = try Promtool.check("# TYPE x_total counter\nx_total{a=\"1} 1\n")
        #expect(broken.status != 0)
    }
}

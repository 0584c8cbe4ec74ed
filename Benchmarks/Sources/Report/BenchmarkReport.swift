import Foundation

/// One reported figure: min and median over the rounds of a run.
struct Figure {
    /// The latest.json key (headline figures) or a descriptive key (detail rows).
    let key: String
    let section: String
    let label: String
    let unit: String
    let samples: Samples
}

/// A target from the issue, stated as met or not met (never tuned to pass).
struct Goal {
    enum Comparison {
        case atLeast, atMost, below
        var symbol: String {
            switch self {
            case .atLeast: return "≥"
            case .atMost: return "≤"
            case .below: return "<"
            }
        }
    }

    /// A goal on a machine-independent figure (callgrind instructions): enforced in every run, CI's `--quick`
    /// one included, which fails when the figure misses the goal by more than `margin` (a fraction of the
    /// threshold: the small quick counts scatter a little). Wall-clock goals are only judged, in the full run.
    struct Enforcement {
        /// The benchmark section that measures it (`--sections` name).
        let section: String
        let margin: Double
    }

    let key: String
    let label: String
    let comparison: Comparison
    let threshold: Double
    var enforcement: Enforcement? = nil

    /// nil when the figure was not measured.
    func isMet(_ value: Double?) -> Bool? {
        isMet(value, threshold: threshold)
    }

    /// Whether `value` is within the goal widened by its margin (nil when not measured).
    func isWithinMargin(_ value: Double?) -> Bool? {
        guard let margin = enforcement?.margin else { return isMet(value) }
        let widened = comparison == .atLeast ? threshold * (1 - margin) : threshold * (1 + margin)
        return isMet(value, threshold: widened)
    }

    private func isMet(_ value: Double?, threshold: Double) -> Bool? {
        guard let value else { return nil }
        switch comparison {
        case .atLeast: return value >= threshold
        case .atMost: return value <= threshold
        case .below: return value < threshold
        }
    }

    /// The goals of issue 6 and Docs/Benchmarks.md, judged on the median.
    static let all: [Goal] = [
        Goal(key: "download_ratio_vs_urlsession", label: "download throughput vs raw URLSession", comparison: .atLeast, threshold: 0.95),
        Goal(key: "coalesced_requests", label: "100 callers of one URL → requests at the server", comparison: .atMost, threshold: 1),
        Goal(key: "decode_ratio_vs_djpeg_baseline", label: "12 MP baseline JPEG decode (Display P3 converted) vs djpeg", comparison: .atMost, threshold: 1.3),
        Goal(key: "decode_ratio_vs_djpeg_untagged", label: "12 MP baseline JPEG decode (untagged) vs djpeg", comparison: .atMost, threshold: 1.2),
        Goal(key: "color_convert_ratio_vs_lcms2", label: "12 MP Display P3 → sRGB vs Pillow ImageCms (lcms2)", comparison: .atMost, threshold: 0.25),
        Goal(key: "decode_ratio_vs_djpeg_progressive", label: "12 MP progressive JPEG decode vs djpeg", comparison: .atMost, threshold: 1.2),
        Goal(key: "jxl_decode_ratio_vs_djxl", label: "12 MP JPEG XL decode (whole processes) vs djxl", comparison: .atMost, threshold: 1.1),
        Goal(key: "progressive_cpu_ratio_png", label: "chunked PNG decode CPU vs one-shot", comparison: .atMost, threshold: 1.5),
        Goal(key: "progressive_cpu_ratio_baseline", label: "chunked baseline JPEG decode CPU vs one-shot", comparison: .atMost, threshold: 1.5),
        Goal(key: "progressive_cpu_ratio_jpeg", label: "chunked progressive JPEG (previews) CPU vs one-shot", comparison: .atMost, threshold: 3),
        Goal(key: "peak_rss_mb_large", label: "peak RSS, 200 × 12 MP JPEG with .scaleDownLargeImages", comparison: .atMost, threshold: 250),
        Goal(key: "animation_peak_rss_mb", label: "peak RSS, 20 × 1000² × 120 GIF at concurrency 8 (MiB)", comparison: .atMost, threshold: 256),
        Goal(key: "avif_decode_ratio_vs_avifdec", label: "12 MP AVIF decode (imagedl process) vs avifdec", comparison: .atMost, threshold: 1.1),
        Goal(key: "avif_animation_peak_rss_mb", label: "peak RSS, 20 × 1000² × 120 AVIF at concurrency 8 (MiB)", comparison: .atMost, threshold: 256),
        Goal(key: "thumbnail_pipeline_ratio_vs_fastest", label: "12 MP JPEG → 256 px q80 thumbnail CPU vs the faster of vipsthumbnail and Pillow", comparison: .atMost, threshold: 0.8),
        Goal(key: "fleet_origin_requests", label: "4 processes × 500 URLs on the shared Redis cache → requests at the origin", comparison: .atMost, threshold: 500),
        Goal(key: "metrics_instructions_ratio", label: "instructions per download with PrometheusMetrics vs without (URLSession)", comparison: .atMost, threshold: 1.02),
        Goal(key: "metrics_curl_instructions_ratio", label: "instructions per download with PrometheusMetrics vs without (curl)", comparison: .atMost, threshold: 1.02),
        // Instruction counts (callgrind): enforced in CI (Docs/Benchmarks.md, "Goals CI enforces").
        Goal(key: "instructions_ratio_vs_urlsession", label: "instructions per download on URLSession vs raw URLSession",
             comparison: .atMost, threshold: 1.05, enforcement: Enforcement(section: "instructions", margin: 0.03)),
        Goal(key: "downloader_curl_instructions_ratio_vs_curl", label: "instructions per download on curl vs curl, HTTP/1.1",
             comparison: .atMost, threshold: 2, enforcement: Enforcement(section: "transport-instructions", margin: 0.03)),
        Goal(key: "downloader_curl_instructions_ratio_vs_curl_https", label: "instructions per download on curl vs curl, HTTPS (HTTP/2)",
             comparison: .atMost, threshold: 1.5, enforcement: Enforcement(section: "transport-instructions", margin: 0.03)),
    ]
}

/// Everything a run measured, in section order: headline figures (the JSON keys), detail rows
/// for the human table, and why anything was left out.
final class BenchmarkReport {
    private(set) var headlines: [Figure] = []
    private(set) var details: [Figure] = []
    private(set) var skipped: [(key: String, reason: String)] = []
    private(set) var notes: [(section: String, text: String)] = []
    private(set) var errors: [String] = []
    var environment: [(String, JSONValue)] = []

    func headline(_ key: String, section: String, label: String, unit: String, _ samples: Samples) {
        headlines.append(Figure(key: key, section: section, label: label, unit: unit, samples: samples))
    }

    func detail(_ key: String, section: String, label: String, unit: String, _ samples: Samples) {
        details.append(Figure(key: key, section: section, label: label, unit: unit, samples: samples))
    }

    func skip(_ key: String, reason: String) {
        skipped.append((key, reason))
    }

    func note(_ section: String, _ text: String) {
        notes.append((section, text))
    }

    /// A measurement that went wrong (failed downloads, a tool that crashed): the run exits non-zero.
    func error(_ text: String) {
        errors.append(text)
    }

    func median(_ key: String) -> Double? {
        figure(key)?.samples.median
    }

    /// A headline or detail figure by key.
    func figure(_ key: String) -> Figure? {
        headlines.first { $0.key == key } ?? details.first { $0.key == key }
    }

    /// Records an error for each enforced goal (machine-independent) of the sections that ran that is missed by
    /// more than its margin, or not measured although its section ran.
    func enforceGoals(sectionsRun: Set<String>) {
        for goal in Goal.all {
            guard let enforcement = goal.enforcement, sectionsRun.contains(enforcement.section) else { continue }
            let value = median(goal.key)
            let bound = "\(goal.comparison.symbol) \(formatNumber(goal.threshold)) with a margin of \(Int((enforcement.margin * 100).rounded())) %"
            switch goal.isWithinMargin(value) {
            case nil: error("goal \(goal.key) (\(bound)): not measured although its section ran")
            case false?: error("goal \(goal.key) missed: \(formatNumber(value)), the goal is \(bound) (machine-independent: a regression)")
            case true?: break
            }
        }
    }

    // MARK: - JSON

    func json(quick: Bool) -> JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("schema", .number(1)),
            ("quick", .bool(quick)),
            ("date", .string(ISO8601DateFormatter().string(from: Date()))),
            ("environment", .object(environment)),
        ]
        let keys = Self.headlineKeys
        for key in keys {
            pairs.append((key, JSONValue.rounded(median(key))))
        }
        for figure in headlines where !keys.contains(figure.key) {
            pairs.append((figure.key, JSONValue.rounded(figure.samples.median)))
        }
        pairs.append(("stats", .object((headlines + details).map { figure in
            (figure.key, .object([
                ("label", .string(figure.label)),
                ("unit", .string(figure.unit)),
                ("min", JSONValue.rounded(figure.samples.min)),
                ("median", JSONValue.rounded(figure.samples.median)),
                ("runs", .number(Double(figure.samples.count))),
            ]))
        })))
        pairs.append(("goals", .array(Goal.all.map { goal in
            let value = median(goal.key)
            let met = goal.isMet(value)
            return .object([
                ("key", .string(goal.key)),
                ("goal", .string("\(goal.comparison.symbol) \(formatNumber(goal.threshold))")),
                ("median", JSONValue.rounded(value)),
                ("met", met.map(JSONValue.bool) ?? .null),
            ])
        })))
        pairs.append(("skipped", .object(skipped.map { ($0.key, .string($0.reason)) })))
        pairs.append(("notes", .array(notes.map { .string("\($0.section): \($0.text)") })))
        pairs.append(("errors", .array(errors.map(JSONValue.string))))
        return .object(pairs)
    }

    /// The keys the issue names, always present in latest.json (null when not measured).
    static let headlineKeys = [
        "download_ratio_vs_urlsession", "download_ratio_vs_curl", "cpu_ms_per_download",
        "urlsession_cpu_ms_per_download", "coalesced_requests",
        "decode_ratio_vs_djpeg_baseline", "decode_ratio_vs_djpeg_untagged", "decode_ratio_vs_djpeg_progressive",
        "jxl_decode_ratio_vs_djxl", "png_decode_ms", "thumbnail_speedup", "color_convert_ms_12mp", "color_convert_ratio_vs_lcms2",
        "progressive_cpu_ratio_jpeg", "progressive_cpu_ratio_png", "progressive_cpu_ratio_baseline",
        "peak_rss_mb_large", "peak_rss_mb_many", "instructions_per_download",
        "thumbnail_pipeline_ms", "thumbnail_pipeline_ratio_vs_vips", "thumbnail_pipeline_ratio_vs_pillow",
        "thumbnail_pipeline_ratio_vs_fastest", "thumbnail_pipeline_peak_rss_mb",
    ]
}

/// A compact number for tables: 3 significant digits, thousands without decimals.
func formatNumber(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "–" }
    let magnitude = abs(value)
    if magnitude >= 1000 || (magnitude == magnitude.rounded() && magnitude < 1e15) {
        return String(Int64(value.rounded()))
    }
    if magnitude >= 100 { return String(format: "%.0f", value) }
    if magnitude >= 10 { return String(format: "%.1f", value) }
    if magnitude >= 1 { return String(format: "%.2f", value) }
    return String(format: "%.3f", value)
}

import Foundation

/// The Prometheus text exposition format (0.0.4): names and label names sanitised, label values and HELP text
/// escaped, numbers as Prometheus parses them (`+Inf`, `NaN`), histograms as cumulative `_bucket` series with
/// `le`, then `_sum` and `_count`.
enum PrometheusExposition {
    static func render(_ families: [(name: String, family: PrometheusMetrics.Family)]) -> String {
        var text = ""
        // Grown once: a line is rarely over 200 bytes, a histogram series writes one per bucket plus three.
        text.reserveCapacity(families.reduce(4096) { $0 + $1.family.series.count * 200 * ($1.family.upperBounds.count + 3) })
        for (name, family) in families where !family.series.isEmpty {
            text += "# HELP \(name) \(escapedHelp(family.help))\n"
            text += "# TYPE \(name) \(family.kind.rawValue)\n"
            // Sorted by labels: the same state always renders the same text.
            let series = family.series.map { (labels: labelText($0.labels), series: $0.series) }.sorted { $0.labels < $1.labels }
            for (labels, series) in series {
                switch series {
                case .counter(let counter):
                    text += "\(name)\(braced(labels)) \(counter.current)\n"
                case .gauge(let gauge):
                    text += "\(name)\(braced(labels)) \(number(gauge.current))\n"
                case .histogram(let histogram):
                    let snapshot = histogram.snapshot
                    var cumulative: UInt64 = 0
                    let prefix = labels.isEmpty ? "" : labels + ","
                    for (i, bound) in histogram.upperBounds.enumerated() {
                        cumulative &+= snapshot.counts[i]
                        text += "\(name)_bucket{\(prefix)le=\"\(number(bound))\"} \(cumulative)\n"
                    }
                    text += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(snapshot.count)\n"
                    text += "\(name)_sum\(braced(labels)) \(number(snapshot.sum))\n"
                    text += "\(name)_count\(braced(labels)) \(snapshot.count)\n"
                }
            }
        }
        return text
    }

    /// `a="1",b="2"` (empty without labels).
    static func labelText(_ labels: [PrometheusMetrics.Label]) -> String {
        labels.map { "\($0.name)=\"\(escapedLabelValue($0.value))\"" }.joined(separator: ",")
    }

    private static func braced(_ labels: String) -> String {
        labels.isEmpty ? "" : "{\(labels)}"
    }

    /// Backslash, double quote and line feed escaped, as the format asks of label values.
    static func escapedLabelValue(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" || $0 == "\r\n" }) else { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Backslash and line feed escaped, as the format asks of HELP text.
    static func escapedHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\r\n", with: "\\n")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A number as Prometheus reads it: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`: anything else becomes `_` (swift-metrics labels such as `a.b.c` too).
    static func metricName(_ label: String) -> String {
        sanitised(label, allowsColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`.
    static func labelName(_ name: String) -> String {
        sanitised(name, allowsColon: false)
    }

    private static func sanitised(_ text: String, allowsColon: Bool) -> String {
        func valid(_ byte: UInt8, first: Bool) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): true
            case UInt8(ascii: ":"): allowsColon
            case UInt8(ascii: "0")...UInt8(ascii: "9"): !first
            default: false
            }
        }
        var first = true
        if !text.isEmpty, text.utf8.allSatisfy({ byte in defer { first = false }; return valid(byte, first: first) }) { return text }
        var scalars = String.UnicodeScalarView()
        for (i, scalar) in text.unicodeScalars.enumerated() {
            let letter = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_" || (allowsColon && scalar == ":")
            let digit = scalar >= "0" && scalar <= "9"
            if i == 0 && digit { scalars.append("_") }
            scalars.append(letter || digit ? scalar : "_")
        }
        return scalars.isEmpty ? "_" : String(scalars)
    }

    /// Prometheus' `histogram_quantile` over per-bucket counts (the last one is `+Inf`'s).
    static func quantile(_ q: Double, upperBounds: [Double], counts: [UInt64]) -> Double? {
        let total = counts.reduce(0, &+)
        guard total > 0, q.isFinite, counts.count == upperBounds.count + 1 else { return nil }
        let rank = min(1, max(0, q)) * Double(total)
        var cumulative: UInt64 = 0
        for (i, bound) in upperBounds.enumerated() {
            let before = cumulative
            cumulative &+= counts[i]
            if Double(cumulative) >= rank, counts[i] > 0 {
                let lower = i == 0 ? 0 : upperBounds[i - 1]
                return lower + (bound - lower) * (rank - Double(before)) / Double(counts[i])
            }
        }
        return upperBounds.last
    }
}

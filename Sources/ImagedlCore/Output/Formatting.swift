import Foundation

/// Human-readable sizes, durations and rates shared by the progress lines, the table and `decode`.
enum Formatting {
    /// "512 B", "67.1 KB", "3.4 MB" (decimal units, as `curl` and browsers show transfer sizes).
    static func bytes(_ count: Int) -> String {
        let value = Double(max(0, count))
        if value < 1000 { return "\(max(0, count)) B" }
        if value < 1_000_000 { return String(format: "%.1f KB", value / 1000) }
        if value < 1_000_000_000 { return String(format: "%.1f MB", value / 1_000_000) }
        return String(format: "%.2f GB", value / 1_000_000_000)
    }

    /// "0.35 ms" below 10 ms, "42.1 ms" below a second, "6.10 s" above.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        if seconds < 0.01 { return String(format: "%.2f ms", seconds * 1000) }
        if seconds < 1 { return String(format: "%.1f ms", seconds * 1000) }
        return String(format: "%.2f s", seconds)
    }

    /// "2 s", "2.5 s": a duration the user typed, without spurious decimals.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? "\(Int(value)) s" : "\(value) s"
    }

    /// "11.0 KB/s"; "-" before any time has passed.
    static func rate(bytes: Int, seconds: Double) -> String {
        guard seconds > 0.001, seconds.isFinite else { return "-" }
        return Formatting.bytes(Int(min(Double(Int.max / 2), Double(max(0, bytes)) / seconds))) + "/s"
    }

    /// Pads or cuts `text` to exactly `width` characters (grapheme clusters), cutting with "…".
    static func fit(_ text: String, width: Int, alignRight: Bool = false) -> String {
        guard width > 0 else { return "" }
        let count = text.count
        if count > width {
            return width == 1 ? "…" : String(text.prefix(width - 1)) + "…"
        }
        let padding = String(repeating: " ", count: width - count)
        return alignRight ? padding + text : text + padding
    }
}

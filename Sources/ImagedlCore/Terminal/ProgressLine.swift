import Foundation

/// The one-line progress bar of a download: name, bar, percentage, bytes and rate, fitted to the terminal
/// width (a line that wrapped would break the cursor arithmetic of the redraw).
enum ProgressLine {
    static let filled: Character = "█"
    static let empty: Character = "░"

    /// `name  [██████░░░░░░]  52%  35.2 KB / 67.1 KB  11.0 KB/s`, at most `columns - 1` characters.
    /// `expected < 0` (no Content-Length) shows "--" instead of a percentage and an empty bar.
    static func running(name: String, received: Int, expected: Int, elapsed: Double, columns: Int) -> String {
        let known = expected > 0
        let fraction = known ? min(1, Double(max(0, received)) / Double(expected)) : 0
        let percent = known ? String(format: "%3d%%", Int((fraction * 100).rounded(.down))) : " --"
        let amount = known ? "\(Formatting.bytes(received)) / \(Formatting.bytes(expected))" : Formatting.bytes(received)
        let stats = "\(percent)  \(amount)  \(Formatting.rate(bytes: received, seconds: elapsed))"
        return assemble(name: name, fraction: fraction, stats: stats, columns: columns)
    }

    /// A queued download that has not started.
    static func waiting(name: String, columns: Int) -> String {
        assemble(name: name, fraction: 0, stats: "waiting", columns: columns)
    }

    /// A finished download: full bar, size, time and what it decoded to (or the error).
    static func finished(_ record: DownloadRecord, columns: Int) -> String {
        let elapsed = Formatting.duration(record.elapsed(now: record.finishedAt ?? 0))
        switch record.state {
        case .succeeded:
            var stats = "100%  \(Formatting.bytes(record.bytes ?? record.received))  \(elapsed)"
            if let format = record.format, let w = record.width, let h = record.height {
                stats += "  \(format.rawValue) \(w)x\(h)"
            }
            if record.incomplete { stats += "  incomplete" }
            if let cache = record.cacheResult { stats += "  (\(cache.words))" }
            if let resumed = record.resumedFrom { stats += "  (resumed at byte \(resumed))" }
            return assemble(name: record.name, fraction: 1, stats: stats, columns: columns)
        case .cancelled:
            return fitLine("\(record.name)  cancelled", columns: columns)
        default:
            let cache = record.cacheResult.map { " (\($0.words))" } ?? ""
            return fitLine("\(record.name)  failed: \(record.error ?? "unknown error")\(cache)", columns: columns)
        }
    }

    private static func assemble(name: String, fraction: Double, stats: String, columns: Int) -> String {
        let limit = max(20, columns - 1)
        let barWidth = limit >= 70 ? 24 : limit >= 50 ? 12 : 6
        let nameWidth = max(6, min(28, limit - barWidth - 4 - stats.count - 2))
        let cells = Int((fraction * Double(barWidth)).rounded(.down))
        let bar = String(repeating: filled, count: cells) + String(repeating: empty, count: barWidth - cells)
        return fitLine("\(Formatting.fit(name, width: nameWidth))  [\(bar)]  \(stats)", columns: columns)
    }

    private static func fitLine(_ line: String, columns: Int) -> String {
        let limit = max(20, columns - 1)
        return line.count > limit ? Formatting.fit(line, width: limit) : line
    }
}

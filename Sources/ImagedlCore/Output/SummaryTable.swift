import Foundation

/// The table printed after all downloads: one row per URL with format, pixel size, bytes, time, cache
/// hit and error, in command-line order.
enum SummaryTable {
    static let headers = ["#", "name", "result", "format", "pixels", "bytes", "time", "cache", "error"]
    /// Columns that hold numbers are right-aligned.
    private static let rightAligned: Set<Int> = [0, 5, 6]

    /// The table's lines (no trailing newlines), each at most `columns - 1` characters.
    static func render(_ records: [DownloadRecord], columns: Int) -> [String] {
        let rows = records.map(row)
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        // Cap the free-text columns so the table fits; the error column takes what is left.
        widths[1] = min(widths[1], 28)
        let fixed = widths.dropLast().reduce(0, +) + 2 * (widths.count - 1)
        widths[widths.count - 1] = max(5, min(widths[widths.count - 1], columns - 1 - fixed))
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (i, cell) in cells.enumerated() {
                parts.append(Formatting.fit(cell, width: widths[i], alignRight: rightAligned.contains(i)))
            }
            // No trailing spaces: the last column is left-aligned text.
            var text = parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        let separator = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        let ok = records.filter { $0.state == .succeeded }.count
        let totalBytes = records.reduce(0) { $0 + ($1.bytes ?? 0) }
        var lines = [line(headers), separator]
        lines += rows.map(line)
        lines.append("\(ok) of \(records.count) downloaded, \(Formatting.bytes(totalBytes)) in all" + cacheCounts(records))
        return lines
    }

    /// The cache answers and shared-cache waits of the run (`CacheTally`), counted on every run.
    static func cacheCounts(_ records: [DownloadRecord]) -> String {
        CacheTally(records).text
    }

    static func row(_ record: DownloadRecord) -> [String] {
        let pixels: String
        if let w = record.width, let h = record.height {
            pixels = (record.frames ?? 1) > 1 ? "\(w)x\(h)x\(record.frames ?? 1)" : "\(w)x\(h)"
        } else {
            pixels = "-"
        }
        return [
            String(record.index + 1),
            record.name,
            record.state == .succeeded ? "ok" : record.state == .cancelled ? "cancelled" : record.state == .failed ? "failed" : record.state.rawValue,
            record.format?.rawValue ?? "-",
            pixels,
            record.bytes.map(Formatting.bytes) ?? (record.received > 0 ? Formatting.bytes(record.received) : "-"),
            record.startedAt == nil ? "-" : Formatting.duration(record.elapsed(now: record.finishedAt ?? 0)),
            record.cacheResult.map { $0 == .memory ? "memory" : $0.rawValue } ?? "-",
            record.error ?? "",
        ]
    }
}

import Foundation

/// `--input` without `--json`: one line per URL when it ends, then the totals. Nothing is kept per URL, so a
/// list of millions prints millions of lines in constant memory (no live bars, no per-URL table).
final class StreamingReporter: DownloadReporter {
    private let preview: Bool
    private let write: (String) -> Void
    private var finishedCount = 0
    private var succeededCount = 0
    private var bytes = 0
    private var caches = CacheTally()

    init(preview: Bool, write: @escaping (String) -> Void = { Console.out($0) }) {
        self.preview = preview
        self.write = write
    }

    func begin(_ records: [DownloadRecord]) {}
    func update(_ record: DownloadRecord) {}

    func finished(_ record: DownloadRecord) {
        finishedCount += 1
        if record.state == .succeeded { succeededCount += 1 }
        bytes += record.bytes ?? 0
        caches.add(record)
        write("[\(record.index + 1)] \(record.url.absoluteString)  " + ProgressLine.finished(record, columns: 200) + "\n")
        if preview, record.state == .succeeded, let image = record.image {
            for line in HalfBlockRenderer.render(image, maxColumns: 48, maxRows: 16) { write(line + "\n") }
        }
    }

    /// `records` are the URLs still unfinished (after Ctrl-C).
    func end(_ records: [DownloadRecord], interrupted: Bool) {
        for record in records where !record.isFinished {
            var cancelled = record
            cancelled.state = .cancelled
            write("[\(record.index + 1)] \(record.url.absoluteString)  " + ProgressLine.finished(cancelled, columns: 200) + "\n")
        }
        if interrupted { write("interrupted: downloads cancelled\n") }
        let total = finishedCount + records.filter { !$0.isFinished }.count
        var summary = "\n\(succeededCount) of \(total) downloaded, \(Formatting.bytes(bytes)) in all"
        if total > succeededCount { summary += "; \(total - succeededCount) failed or cancelled" }
        summary += caches.text
        write(summary + "\n")
    }
}

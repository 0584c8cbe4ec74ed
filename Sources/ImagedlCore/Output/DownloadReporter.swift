import Foundation

/// Shows downloads as they happen. Every call comes from the command's one serial queue.
protocol DownloadReporter: AnyObject {
    /// Before any download starts.
    func begin(_ records: [DownloadRecord])
    /// Bytes arrived, a partial image was decoded, or the download started.
    func update(_ record: DownloadRecord)
    /// The download ended (success, failure or cancel); called once per record.
    func finished(_ record: DownloadRecord)
    /// After everything ended or was cancelled: the summary.
    func end(_ records: [DownloadRecord], interrupted: Bool)
}

/// `--json`: one JSON object per URL, on stdout, when it finishes; nothing else on stdout.
final class JSONReporter: DownloadReporter {
    private let write: (String) -> Void

    init(write: @escaping (String) -> Void = { Console.out($0) }) { self.write = write }

    func begin(_ records: [DownloadRecord]) {}
    func update(_ record: DownloadRecord) {}
    func finished(_ record: DownloadRecord) { write(record.json.serialized() + "\n") }
    func end(_ records: [DownloadRecord], interrupted: Bool) {
        // URLs that never finished (Ctrl-C) still get their object, so every URL has exactly one line.
        for record in records where !record.isFinished {
            var cancelled = record
            cancelled.state = .cancelled
            cancelled.error = "cancelled"
            write(cancelled.json.serialized() + "\n")
        }
    }
}

/// Not a terminal: plain lines (start, each quarter of the bytes, the result), then the table.
/// `--preview` draws final images only, since nothing can be redrawn in a pipe.
final class PlainReporter: DownloadReporter {
    private let write: (String) -> Void
    private let preview: Bool
    private var quartersShown: [Int: Int] = [:]

    init(preview: Bool, write: @escaping (String) -> Void = { Console.out($0) }) {
        self.preview = preview
        self.write = write
    }

    func begin(_ records: [DownloadRecord]) {}

    func update(_ record: DownloadRecord) {
        if record.state == .downloading && quartersShown[record.index] == nil {
            quartersShown[record.index] = 0
            write("[\(record.index + 1)] \(record.url.absoluteString): started\n")
        }
        guard record.expected > 0 else { return }
        let quarter = min(3, Int(Double(record.received) / Double(record.expected) * 4))
        if quarter > (quartersShown[record.index] ?? 0) {
            quartersShown[record.index] = quarter
            write("[\(record.index + 1)] \(record.name): \(quarter * 25)% of \(Formatting.bytes(record.expected))\n")
        }
    }

    func finished(_ record: DownloadRecord) {
        write("[\(record.index + 1)] " + ProgressLine.finished(record, columns: 200) + "\n")
        if preview, record.state == .succeeded, let image = record.image {
            for line in HalfBlockRenderer.render(image, maxColumns: 48, maxRows: 16) { write(line + "\n") }
        }
    }

    func end(_ records: [DownloadRecord], interrupted: Bool) {
        if interrupted { write("interrupted: downloads cancelled\n") }
        write("\n" + SummaryTable.render(records, columns: 200).joined(separator: "\n") + "\n")
    }
}

/// A terminal: a live region at the bottom, redrawn in place at most ~12 times a second, with one
/// progress bar per unfinished URL and (with `--preview`) the newest partial image. Finished downloads are
/// printed once above the region, with their final image, and scroll away like normal output.
final class LiveReporter: DownloadReporter {
    private let preview: Bool
    private let queue: DispatchQueue
    private var records: [DownloadRecord] = []
    /// The record whose partial image is shown in the live region.
    private var previewIndex: Int?
    private var drawnLines = 0
    private var dirty = false
    private var timer: (any DispatchSourceTimer)?
    private let write: (String) -> Void

    /// `queue` is the serial queue every reporter call comes from; the redraw timer runs there too.
    init(preview: Bool, queue: DispatchQueue, write: @escaping (String) -> Void = { Console.out($0) }) {
        self.preview = preview
        self.queue = queue
        self.write = write
    }

    func begin(_ records: [DownloadRecord]) {
        self.records = records
        write(Terminal.hideCursor)
        redraw()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(80), repeating: .milliseconds(80))
        timer.setEventHandler { [weak self] in
            guard let self, self.dirty else { return }
            self.redraw()
        }
        timer.resume()
        self.timer = timer
    }

    func update(_ record: DownloadRecord) {
        guard records.indices.contains(record.index) else { return }
        let hadImage = records[record.index].image
        records[record.index] = record
        if preview, record.image != nil, record.image?.isIncomplete == true || hadImage == nil {
            previewIndex = record.index
        }
        dirty = true
    }

    func finished(_ record: DownloadRecord) {
        guard records.indices.contains(record.index) else { return }
        records[record.index] = record
        if previewIndex == record.index { previewIndex = nil }
        // Print the finished line (and final image) above the live region, then redraw the region below it.
        var text = clearRegion()
        let columns = Terminal.size().columns
        let line = ProgressLine.finished(record, columns: columns)
        text += (record.state == .succeeded ? line : Terminal.red(line)) + "\n"
        if preview, record.state == .succeeded, let image = record.image {
            let box = previewBox()
            for line in HalfBlockRenderer.render(image, maxColumns: box.columns, maxRows: box.rows) { text += line + "\n" }
        }
        write(text)
        redraw()
    }

    func end(_ records: [DownloadRecord], interrupted: Bool) {
        timer?.cancel()
        timer = nil
        self.records = records
        var text = clearRegion()
        for record in records where !record.isFinished {
            var cancelled = record
            cancelled.state = .cancelled
            text += ProgressLine.finished(cancelled, columns: Terminal.size().columns) + "\n"
        }
        if interrupted { text += Terminal.red("interrupted") + ": downloads cancelled\n" }
        text += "\n" + SummaryTable.render(records, columns: Terminal.size().columns).joined(separator: "\n") + "\n"
        text += Terminal.showCursor
        write(text)
    }

    /// Where previews may draw: at most 48 columns and 16 rows, less on a small terminal.
    private func previewBox() -> (columns: Int, rows: Int) {
        let size = Terminal.size()
        return (max(8, min(48, size.columns - 1)), max(4, min(16, size.rows / 2 - 1)))
    }

    /// Escape sequences that move to the top of the live region and erase it.
    private func clearRegion() -> String {
        let text = Terminal.cursorUp(drawnLines) + Terminal.clearToEnd
        drawnLines = 0
        return text
    }

    private func redraw() {
        dirty = false
        let size = Terminal.size()
        let now = Clock.now
        var lines: [String] = []
        let pending = records.filter { !$0.isFinished }
        // Keep the region shorter than the screen: cursor movement cannot reach lines scrolled off the top.
        let previewRows = preview && previewIndex != nil ? previewBox().rows : 0
        let maxBars = max(1, size.rows - previewRows - 2)
        for record in pending.prefix(maxBars) {
            if record.state == .waiting {
                lines.append(ProgressLine.waiting(name: record.name, columns: size.columns))
            } else {
                lines.append(ProgressLine.running(name: record.name, received: record.received,
                                                  expected: record.expected, elapsed: record.elapsed(now: now),
                                                  columns: size.columns))
            }
        }
        if pending.count > maxBars { lines.append("… and \(pending.count - maxBars) more") }
        if preview, let index = previewIndex, records.indices.contains(index), let image = records[index].image {
            let box = previewBox()
            lines += HalfBlockRenderer.render(image, maxColumns: box.columns, maxRows: box.rows)
        }
        var text = clearRegion()
        for line in lines { text += Terminal.clearLine + line + "\n" }
        drawnLines = lines.count
        write(text)
    }
}

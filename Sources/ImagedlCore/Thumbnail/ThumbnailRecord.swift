import Decoding
import Foundation

/// What happened to one input of `imagedl thumbnail`.
struct ThumbnailRecord: Sendable {
    /// Position on the command line (then `--input`), from 0.
    let index: Int
    /// The input as given: a path or a URL.
    let input: String
    /// Where the thumbnail goes (decided before any work, so names never depend on completion order).
    let destination: URL
    var succeeded = false
    var width: Int?
    var height: Int?
    var bytes: Int?
    /// Decode, transform, encode and write, in seconds (not the download).
    var seconds: Double?
    /// The input ended early and the thumbnail shows its decoded part (`--allow-incomplete`).
    var incomplete = false
    var error: String?

    /// `{"input":…,"file":…,"status":"ok","format":…,"width":…,"height":…,"bytes":…,"seconds":…,"incomplete":…,
    /// "error":null}`; `file` is null when nothing was written, `incomplete` null when no thumbnail was made.
    func json(format: ThumbnailOptions.Format) -> JSONValue {
        .object([
            ("input", .string(input)),
            ("file", succeeded ? .string(destination.path) : .null),
            ("status", .string(succeeded ? "ok" : "error")),
            ("format", succeeded ? .string(format.rawValue) : .null),
            ("width", width.map(JSONValue.int) ?? .null),
            ("height", height.map(JSONValue.int) ?? .null),
            ("bytes", bytes.map(JSONValue.int) ?? .null),
            ("seconds", seconds.map(JSONValue.double) ?? .null),
            ("incomplete", succeeded ? .bool(incomplete) : .null),
            ("error", error.map(JSONValue.string) ?? .null),
        ])
    }

    /// "in.jpg → out/in.jpg  256×192  9.1 KB  14.2 ms", or "in.jpg: error".
    var line: String {
        guard succeeded, let width, let height else { return "\(input): \(error ?? "failed")" }
        return "\(input) → \(destination.path)  \(width)×\(height)  \(Formatting.bytes(bytes ?? 0))  "
            + Formatting.duration(seconds ?? 0) + (incomplete ? "  incomplete (data ends early)" : "")
    }
}

/// Reports thumbnails as they finish. Called from worker threads: implementations lock.
protocol ThumbnailReporter: AnyObject, Sendable {
    func begin(total: Int)
    func finished(_ record: ThumbnailRecord)
    func end(_ records: [ThumbnailRecord], seconds: Double)
}

/// `--json`: one object per input, as each finishes; nothing else on stdout.
final class ThumbnailJSONReporter: ThumbnailReporter, @unchecked Sendable {  // `lock` serialises writes
    private let format: ThumbnailOptions.Format
    private let write: (String) -> Void
    private let lock = NSLock()

    init(format: ThumbnailOptions.Format, write: @escaping (String) -> Void = { Console.out($0) }) {
        self.format = format
        self.write = write
    }

    func begin(total: Int) {}
    func finished(_ record: ThumbnailRecord) { lock.withLock { write(record.json(format: format).serialized() + "\n") } }
    func end(_ records: [ThumbnailRecord], seconds: Double) {}
}

/// Lines per finished input and a summary; on a terminal also a progress bar kept on the last line.
final class ThumbnailLineReporter: ThumbnailReporter, @unchecked Sendable {  // `lock` guards the counters
    private let live: Bool
    private let write: (String) -> Void
    private let lock = NSLock()
    private var total = 0, done = 0, failed = 0

    init(live: Bool, write: @escaping (String) -> Void = { Console.out($0) }) {
        self.live = live
        self.write = write
    }

    func begin(total: Int) {
        lock.withLock {
            self.total = total
            if live { write(Terminal.hideCursor + progressLine()) }
        }
    }

    func finished(_ record: ThumbnailRecord) {
        lock.withLock {
            done += 1
            if !record.succeeded { failed += 1 }
            let text = record.succeeded ? record.line : (live ? Terminal.red(record.line) : record.line)
            write(live ? "\r" + Terminal.clearLine + text + "\n" + progressLine() : text + "\n")
        }
    }

    func end(_ records: [ThumbnailRecord], seconds: Double) {
        lock.withLock {
            let rate = seconds > 0 ? String(format: ", %.1f per second", Double(done) / seconds) : ""
            let summary = "\(done - failed) of \(total) thumbnails written in \(Formatting.duration(seconds))\(rate)"
                + (failed > 0 ? ", \(failed) failed" : "")
            write(live ? "\r" + Terminal.clearLine + summary + "\n" + Terminal.showCursor : summary + "\n")
        }
    }

    /// "[=========>          ] 12/40" sized to the terminal.
    private func progressLine() -> String {
        let counter = " \(done)/\(total)" + (failed > 0 ? " (\(failed) failed)" : "")
        let width = max(10, min(50, Terminal.size().columns - counter.count - 3))
        let filled = total > 0 ? width * done / total : 0
        return "[" + String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled) + "]" + counter
    }
}

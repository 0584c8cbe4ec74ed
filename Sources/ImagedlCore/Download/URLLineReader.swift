import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads `--input`'s URLs lazily: one line at a time from a file descriptor, through a fixed-size buffer, so a
/// file of millions of lines never sits in memory. Blank lines and lines whose first non-blank character is "#"
/// are skipped; CRLF line ends, surrounding whitespace and a UTF-8 byte order mark are tolerated.
///
/// Not thread-safe: one reader thread owns it.
final class URLLineReader {
    /// One line that is not skipped.
    enum Line: Equatable {
        /// An absolute http(s) URL, on line `number` (from 1).
        case url(URL, number: Int)
        /// Anything else (shortened for messages), on line `number`.
        case invalid(String, number: Int)
    }

    /// Why the input cannot be read.
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    /// Lines longer than this are reported invalid and skipped without being buffered (no URL is this long).
    static let maximumLineLength = 64 * 1024

    private let fd: Int32
    private let ownsDescriptor: Bool
    private let chunkSize: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEOF = false
    private var lineNumber = 0

    /// Opens `path` ("-" is stdin).
    convenience init(path: String) throws(ReadError) {
        if path == "-" {
            self.init(fileDescriptor: STDIN_FILENO, ownsDescriptor: false)
            return
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw ReadError(description: "cannot read \(path): it is a folder")
        }
        self.init(fileDescriptor: fd, ownsDescriptor: true)
    }

    /// Reads from `fileDescriptor`; closes it when done if `ownsDescriptor`. `chunkSize` is small in tests only.
    init(fileDescriptor: Int32, ownsDescriptor: Bool, chunkSize: Int = 64 * 1024) {
        fd = fileDescriptor
        self.ownsDescriptor = ownsDescriptor
        self.chunkSize = max(1, chunkSize)
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// The next URL or invalid line, nil at the end of the input. Blocks while the input has nothing to give
    /// (a pipe); throws on a read error.
    func next() throws(ReadError) -> Line? {
        while let raw = try nextRawLine() {
            lineNumber += 1
            if raw.tooLong {
                return .invalid("a line of more than \(Self.maximumLineLength) bytes", number: lineNumber)
            }
            var text = String(decoding: raw.bytes, as: UTF8.self)
            if lineNumber == 1, text.hasPrefix("\u{FEFF}") { text.removeFirst() }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let url = try? ArgumentParser.parseURL(trimmed) else {
                let shown = trimmed.count > 80 ? String(trimmed.prefix(80)) + "…" : trimmed
                return .invalid(shown, number: lineNumber)
            }
            return .url(url, number: lineNumber)
        }
        return nil
    }

    /// The bytes of the next line without its "\n" (nil at EOF), or `tooLong` after skipping past a line over the
    /// limit.
    private func nextRawLine() throws(ReadError) -> (bytes: ArraySlice<UInt8>, tooLong: Bool)? {
        var discarding = false
        var scanFrom = start
        while true {
            if let newline = buffer[scanFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                if discarding || line.count > Self.maximumLineLength { return ([], true) }
                return (line, false)
            }
            if atEOF {
                guard start < buffer.count || discarding else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return discarding || line.count > Self.maximumLineLength ? ([], true) : (line, false)
            }
            if buffer.count - start > Self.maximumLineLength {
                // Drop what is buffered of this line and keep reading to its end.
                discarding = true
                start = buffer.count
            }
            compact()
            scanFrom = buffer.count
            try fill()
        }
    }

    /// Moves the unread bytes to the front, so the buffer holds at most one line plus one chunk.
    private func compact() {
        guard start > 0 else { return }
        buffer.removeSubrange(0..<start)
        start = 0
    }

    private func fill() throws(ReadError) {
        let oldCount = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        var n: Int
        var failure: Int32 = 0
        repeat {
            n = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return read(fd, base + oldCount, chunkSize)
            }
            failure = n < 0 ? errno : 0
        } while failure == EINTR
        guard n >= 0 else {
            buffer.removeSubrange(oldCount...)
            throw ReadError(description: "cannot read the input: \(String(cString: strerror(failure)))")
        }
        buffer.removeSubrange((oldCount + n)...)
        if n == 0 { atEOF = true }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few terminal facts and escape sequences the tool needs (no curses: plain ANSI/ECMA-48).
enum Terminal {
    /// Whether standard output is a terminal; pipes and files get plain lines without escapes.
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Columns and rows of the terminal on stdout; 80×24 when unknown (not a TTY, or the ioctl fails).
    static func size() -> (columns: Int, rows: Int) {
        var ws = winsize()
        #if canImport(Glibc)
        let request = UInt(TIOCGWINSZ)
        #else
        let request = TIOCGWINSZ
        #endif
        if ioctl(STDOUT_FILENO, request, &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            return (Int(ws.ws_col), Int(ws.ws_row))
        }
        return (80, 24)
    }

    static let hideCursor = "\u{1B}[?25l"
    static let showCursor = "\u{1B}[?25h"
    /// Erases the whole line the cursor is on.
    static let clearLine = "\u{1B}[2K"
    /// Erases from the cursor to the end of the screen.
    static let clearToEnd = "\u{1B}[J"
    static let reset = "\u{1B}[0m"

    /// Moves the cursor up `n` lines to column 1 (nothing for n ≤ 0).
    static func cursorUp(_ n: Int) -> String { n > 0 ? "\u{1B}[\(n)F" : "\r" }

    static func bold(_ s: String) -> String { "\u{1B}[1m\(s)\u{1B}[0m" }
    static func red(_ s: String) -> String { "\u{1B}[31m\(s)\u{1B}[0m" }
    static func green(_ s: String) -> String { "\u{1B}[32m\(s)\u{1B}[0m" }
    static func dim(_ s: String) -> String { "\u{1B}[2m\(s)\u{1B}[0m" }
}

/// Unbuffered writes to stdout and stderr, so progress redraws appear at once and interleave correctly
/// with lines written by other parts of the program.
enum Console {
    private static let lock = NSLock()

    static func out(_ text: String) { write(text, to: STDOUT_FILENO) }
    static func err(_ text: String) { write(text, to: STDERR_FILENO) }

    private static func write(_ text: String, to fd: Int32) {
        lock.withLock {
            var bytes = Array(text.utf8)
            var offset = 0
            var attempts = 0
            // Bounded: a terminal that keeps refusing writes (EAGAIN) loses output rather than hanging us.
            while offset < bytes.count && attempts < 10_000 {
                attempts += 1
                let written = bytes.withUnsafeMutableBytes { buffer -> Int in
                    guard let base = buffer.baseAddress else { return 0 }
                    #if canImport(Glibc)
                    return Glibc.write(fd, base + offset, buffer.count - offset)
                    #else
                    return Darwin.write(fd, base + offset, buffer.count - offset)
                    #endif
                }
                if written > 0 {
                    offset += written
                } else if written < 0 && errno != EINTR && errno != EAGAIN {
                    return
                }
            }
        }
    }
}

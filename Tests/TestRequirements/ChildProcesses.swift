import Foundation

/// Starts the tests' child processes (servers, `imagedl`, `openssl`) one at a time.
///
/// Foundation's `Process` learns that a child exited when the child's end of a socket pair closes, and only then
/// reaps it. That end is not close-on-exec: a child that another thread starts at the same moment can inherit
/// it, and the first child then stays a zombie for as long as the second lives. Its `waitUntilExit()` spins
/// meanwhile (a test's `stop()` held a thread for minutes), and so does Swift Testing's wait thread, which looks
/// at any exited child before its exit tests' own (Docs/Reliability.md, "Bugs found and fixed", 11). One launch
/// at a time closes the window: each launch closes every descriptor the others made before it.
public enum ChildProcesses {
    private static let lock = NSLock()

    /// `process.run()`, never at the same time as another launch through this function.
    public static func run(_ process: Process) throws {
        try lock.withLock { try process.run() }
    }
}

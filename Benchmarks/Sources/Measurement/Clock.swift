#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall and CPU clocks. CPU time comes from `clock_gettime` (nanosecond resolution on Linux), split into
/// the calling thread (single-threaded work such as one decode) and the whole process (downloads, which
/// spread over the session's and the operation queue's threads).
enum Clock {
    /// Monotonic wall time in seconds.
    static func wall() -> Double { read(CLOCK_MONOTONIC) }
    /// CPU seconds used by every thread of this process so far.
    static func processCPU() -> Double { read(CLOCK_PROCESS_CPUTIME_ID) }
    /// CPU seconds used by the calling thread so far.
    static func threadCPU() -> Double { read(CLOCK_THREAD_CPUTIME_ID) }

    private static func read(_ clock: clockid_t) -> Double {
        var ts = timespec()
        guard clock_gettime(clock, &ts) == 0 else { return 0 }
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// What one measured piece of work cost.
struct Cost {
    /// Wall seconds.
    var wall: Double
    /// CPU seconds (user + system) of whoever did the work: this thread, this process or a child process.
    var cpu: Double
}

/// What a client running in a child process cost, two ways. `own`: what the child timed itself around its
/// downloads (start-up excluded; nil for a tool such as curl, which cannot time itself). `process`: its whole
/// process from spawn to exit (wait4: start-up included), the one way every client, curl too, can be timed.
/// A ratio against curl compares `process` figures on both sides; ratios among the Swift clients compare `own`.
struct ChildCost {
    var own: Cost?
    var process: Cost
}

/// Runs `body` on the calling thread and returns its wall and thread-CPU cost.
func measureOnThread<T>(_ body: () throws -> T) rethrows -> (T, Cost) {
    let wall0 = Clock.wall()
    let cpu0 = Clock.threadCPU()
    let value = try body()
    let cpu1 = Clock.threadCPU()
    let wall1 = Clock.wall()
    return (value, Cost(wall: wall1 - wall0, cpu: cpu1 - cpu0))
}

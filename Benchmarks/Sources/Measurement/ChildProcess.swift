#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a program as a child process and reports what the child alone cost: its wall time, its CPU time
/// from `wait4`'s rusage (never mixed with this process's own usage, unlike RUSAGE_CHILDREN deltas) and,
/// when asked, its peak RSS.
///
/// Peak RSS is not taken from our own `wait4`: Linux folds the memory of the process a child was spawned from
/// into the child's `ru_maxrss` (posix_spawn shares this process's address space until `exec`, and `exec` keeps
/// the larger of the old and new peaks), so every child would report at least this benchmark's own peak —
/// 170 MB after the decode section. The child is started through `/usr/bin/time` instead, which forks it from
/// its own small process and reports the child's peak alone.
struct ChildProcess {
    struct Outcome {
        /// Exit status, or 128 + signal number when the child was killed.
        var status: Int32
        var cost: Cost
        /// Peak resident set size of the child (its largest descendant included), in bytes; 0 unless asked.
        var peakRSS: Int
        /// What the child wrote to standard output (when captured).
        var output: String
    }

    enum Failure: Error, CustomStringConvertible {
        case spawn(String, Int32)
        case wait(Int32)
        case inheritedPeakRSS(program: String, kilobytes: Int)
        var description: String {
            switch self {
            case .spawn(let program, let code): return "cannot start \(program): \(String(cString: strerror(code)))"
            case .wait(let code): return "wait4 failed: \(String(cString: strerror(code)))"
            case .inheritedPeakRSS(let program, let kilobytes):
                return "\(program): the child's peak RSS (\(kilobytes) KB) equals this process's own: the high-water mark a "
                    + "child spawned from here inherits, not the child's (ChildProcess says why); not measured"
            }
        }
    }

    /// The program that measures a child's own peak RSS (Debian's `time` package; run.sh installs it).
    static let timeProgram = "/usr/bin/time"

    /// Runs `arguments[0]` (looked up in PATH) with the rest as its arguments. Standard output goes to a
    /// temporary file when `captureOutput` is set, else to /dev/null; standard error is inherited.
    /// `measurePeakRSS` runs it under `/usr/bin/time` (its fork and exec add well under a millisecond of CPU).
    static func run(_ arguments: [String], captureOutput: Bool = false, measurePeakRSS: Bool = false) throws -> Outcome {
        guard arguments.first != nil else { throw Failure.spawn("(nothing)", EINVAL) }
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("bench-child-\(getpid())-\(UUID().uuidString)").path
        let outputPath = captureOutput ? temporary + ".out" : "/dev/null"
        let rssPath = temporary + ".rss"
        defer {
            if captureOutput { unlink(outputPath) }
            if measurePeakRSS { unlink(rssPath) }
        }
        if measurePeakRSS, access(timeProgram, X_OK) != 0 {
            throw Failure.spawn(timeProgram, ENOENT)
        }
        let command = measurePeakRSS ? [timeProgram, "-f", "%M", "-o", rssPath, "--"] + arguments : arguments
        let program = command[0]

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }

        var pid: pid_t = 0
        let wall0 = Clock.wall()
        let spawned = posix_spawnp(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure.spawn(program, spawned) }

        var status: Int32 = 0
        var usage = rusage()
        var waited: pid_t = -1
        // Retries only on EINTR; any other error ends the wait.
        for _ in 0..<1_000 {
            waited = wait4(pid, &status, 0, &usage)
            if waited == pid || errno != EINTR { break }
        }
        let wall1 = Clock.wall()
        guard waited == pid else { throw Failure.wait(errno) }

        let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        let output = captureOutput ? ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "") : ""
        var peakRSS = 0
        if measurePeakRSS {
            // time writes "Command exited with non-zero status N" before the figure when the child failed.
            let report = (try? String(contentsOfFile: rssPath, encoding: .utf8)) ?? ""
            guard let kilobytes = report.split(whereSeparator: \.isNewline).last.flatMap({ Int($0) }) else {
                throw Failure.spawn("\(timeProgram) (no peak RSS reported: \(report))", EIO)
            }
            // A child that reports exactly this process's peak measured nothing of its own: it is the mark a
            // vfork'd child inherits (the flaw that once made three sections read 169.934 MB). Never recorded.
            if abs(kilobytes - Self.ownPeakKilobytes()) <= Self.inheritanceTolerance {
                throw Failure.inheritedPeakRSS(program: arguments[0], kilobytes: kilobytes)
            }
            peakRSS = kilobytes * 1024
        }
        return Outcome(status: exitCode(status), cost: Cost(wall: wall1 - wall0, cpu: cpu), peakRSS: peakRSS, output: output)
    }

    /// This process's own peak RSS so far (KB).
    static func ownPeakKilobytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Int(usage.ru_maxrss)
    }

    /// How close (KB) a child's peak may come to this process's before it counts as inherited: one page. A child
    /// whose own peak lands within 4 KB of the benchmark's by chance is re-run by nobody: the round fails loudly.
    static let inheritanceTolerance = 4

    /// Whether `program` can be found in PATH.
    static func exists(_ program: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }

    private static func seconds(_ tv: timeval) -> Double { Double(tv.tv_sec) + Double(tv.tv_usec) / 1e6 }

    /// WIFEXITED/WEXITSTATUS/WTERMSIG are macros Swift does not import.
    private static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a program as a child process and reports what the child alone cost: its wall time, its CPU time
/// and peak RSS from `wait4`'s rusage (never mixed with this process's own usage, unlike RUSAGE_CHILDREN
/// deltas).
struct ChildProcess {
    struct Outcome {
        /// Exit status, or 128 + signal number when the child was killed.
        var status: Int32
        var cost: Cost
        /// Peak resident set size of the child, in bytes.
        var peakRSS: Int
        /// What the child wrote to standard output (when captured).
        var output: String
    }

    enum Failure: Error, CustomStringConvertible {
        case spawn(String, Int32)
        case wait(Int32)
        var description: String {
            switch self {
            case .spawn(let program, let code): return "cannot start \(program): \(String(cString: strerror(code)))"
            case .wait(let code): return "wait4 failed: \(String(cString: strerror(code)))"
            }
        }
    }

    /// Runs `arguments[0]` (looked up in PATH) with the rest as its arguments. Standard output goes to a
    /// temporary file when `captureOutput` is set, else to /dev/null; standard error is inherited.
    static func run(_ arguments: [String], captureOutput: Bool = false) throws -> Outcome {
        guard let program = arguments.first else { throw Failure.spawn("(nothing)", EINVAL) }
        let outputPath = captureOutput
            ? FileManager.default.temporaryDirectory.appendingPathComponent("bench-child-\(getpid())-\(UUID().uuidString).out").path
            : "/dev/null"
        defer { if captureOutput { unlink(outputPath) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
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
        return Outcome(
            status: exitCode(status), cost: Cost(wall: wall1 - wall0, cpu: cpu),
            peakRSS: Int(usage.ru_maxrss) * 1024, output: output)
    }

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

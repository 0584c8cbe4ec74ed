import Foundation
import TestRequirements

/// A redis-server of the test's own on 127.0.0.1: a free port, no persistence (`--save ""`, no AOF, a
/// temporary working directory), started in the foreground under a small Python supervisor (`ServerSupervisor`)
/// that kills it on `stop()`, when the test process ends however it ends (the supervisor's stdin closes), or
/// after 900 s, a bound far past any test on a loaded machine. (Signals blocked in the spawning dispatch thread
/// are unblocked first, as for nginx.)
final class RedisServer: @unchecked Sendable {  // immutable after init; `process` and `lifeline` are thread-safe
    let port: Int
    let directory: URL
    private let process: Process
    private let lifeline: Pipe


    /// Starts a server (see `init`) on a thread of its own: starting one blocks for as long as python and redis
    /// take to come up, which on the cooperative pool (two threads on two cores) stalls every other test.
    static func start(arguments: [String] = [], port: Int? = nil, configuration: String? = nil) async throws -> RedisServer {
        try await offCooperativePool { Result { try RedisServer(arguments: arguments, port: port, configuration: configuration) } }.get()
    }

    /// Starts a server; `arguments` are extra configuration (`["--requirepass", "secret"]`); `port` nil picks a
    /// free one; `configuration` is the text of a configuration file written for it (a Sentinel's, which the
    /// Sentinel rewrites as it learns). Blocks until it listens: async tests call `start` instead.
    init(arguments: [String] = [], port fixedPort: Int? = nil, configuration: String? = nil) throws {
        guard let binary = Requirement.redisServerPath else { throw RedisServerFailure(message: "no redis-server") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("od-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError = "not started"
        let pidFile = directory.appendingPathComponent("redis.pid")
        // A port picked free may be taken before redis binds it: a few tries.
        for _ in 0..<5 {
            let port = try fixedPort ?? LoopbackPort.free()
            try? FileManager.default.removeItem(at: pidFile)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            var configFile: [String] = []
            if let configuration {
                let file = directory.appendingPathComponent("redis.conf")
                try configuration.write(to: file, atomically: true, encoding: .utf8)
                configFile = [file.path]
            }
            process.arguments = ["python3", "-c", ServerSupervisor.script, "900", binary] + configFile + [
                                 "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                 "--dir", directory.path, "--daemonize", "no", "--loglevel", "warning",
                                 "--logfile", directory.appendingPathComponent("redis.log").path,
                                 "--enable-debug-command", "local",
                                 "--pidfile", pidFile.path] + arguments
            let lifeline = Pipe()
            process.standardInput = lifeline
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try ChildProcesses.run(process)
            if LoopbackPort.waitForServer(port: port, process: process, pidFile: pidFile) {
                self.port = port
                self.process = process
                self.lifeline = lifeline
                return
            }
            ServerSupervisor.stop(process, lifeline: lifeline)
            lastError = (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? "no log"
        }
        try? FileManager.default.removeItem(at: directory)
        throw RedisServerFailure(message: "redis-server did not start: \(lastError.suffix(500))")
    }

    /// `redis://127.0.0.1:<port>/<db>`, with credentials when given.
    func url(database: Int = 0, user: String? = nil, password: String? = nil) -> URL {
        var credentials = ""
        if let password { credentials = "\(user ?? ""):\(password)@" }
        return URL(string: "redis://\(credentials)127.0.0.1:\(port)/\(database)")!
    }

    /// Kills the server (SIGKILL through the supervisor) and removes its directory. Idempotent.
    func stop() {
        ServerSupervisor.stop(process, lifeline: lifeline)
        try? FileManager.default.removeItem(at: directory)
    }
}

struct RedisServerFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

import Foundation

/// For the Fleet section's failover rounds: a Redis primary, its replica and three Sentinels (quorum 2, a failed
/// primary noticed after one second), all on free loopback ports with a password, no persistence, in a
/// temporary folder; `stop()` kills them all. Readiness is checked with `redis-cli`, which run.sh installs with
/// redis-server (Debian's redis-tools).
final class SentinelDeployment: @unchecked Sendable {  // `processes` guarded by `lock`; the rest is immutable
    static let primaryName = "mymaster"
    static let password = "bench-failover"

    let primaryPort: Int
    let replicaPort: Int
    let sentinelPorts: [Int]
    private let folder: URL
    private let lock = NSLock()
    private var processes: [Int: Process] = [:]

    init(server: String = "redis-server") throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-sentinel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        primaryPort = try Self.freePort()
        replicaPort = try Self.freePort()
        sentinelPorts = try (0..<3).map { _ in try Self.freePort() }
        do {
            let data = ["--requirepass", Self.password, "--masterauth", Self.password, "--repl-diskless-sync-delay", "0"]
            try launch(server, port: primaryPort, data)
            try launch(server, port: replicaPort, data + ["--replicaof", "127.0.0.1", String(primaryPort)])
            try wait("the replica to sync") { self.cli(self.replicaPort, ["INFO", "replication"]).contains("master_link_status:up") }
            let configuration = """
                sentinel resolve-hostnames no
                sentinel monitor \(Self.primaryName) 127.0.0.1 \(primaryPort) 2
                sentinel down-after-milliseconds \(Self.primaryName) 1000
                sentinel failover-timeout \(Self.primaryName) 3000
                sentinel auth-pass \(Self.primaryName) \(Self.password)
                requirepass \(Self.password)
                sentinel sentinel-pass \(Self.password)

                """
            for port in sentinelPorts {
                let file = folder.appendingPathComponent("sentinel-\(port).conf")
                try configuration.write(to: file, atomically: true, encoding: .utf8)
                try launch(server, port: port, ["--sentinel"], configFile: file.path)
            }
            try wait("the Sentinels to know the replica and each other") {
                self.sentinelPorts.allSatisfy { port in
                    self.cli(port, ["SENTINEL", "REPLICAS", Self.primaryName]).contains("127.0.0.1")
                        && self.cli(port, ["SENTINEL", "SENTINELS", Self.primaryName]).components(separatedBy: "runid").count - 1 == 2
                }
            }
        } catch {
            stop()
            throw error
        }
    }

    /// `redis-sentinel://:password@127.0.0.1:s1,…/mymaster/0` with `query`.
    func url(query: String) -> String {
        "redis-sentinel://:\(Self.password)@" + sentinelPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",") + "/\(Self.primaryName)/0?" + query
    }

    /// Kills the primary (SIGKILL): the Sentinels then promote the replica.
    func killPrimary() {
        if let process = lock.withLock({ processes.removeValue(forKey: primaryPort) }), process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The port the Sentinels name as the primary's.
    var currentPrimaryPort: Int? {
        Int(cli(sentinelPorts[0], ["SENTINEL", "get-master-addr-by-name", Self.primaryName]).split(separator: "\n").last ?? "")
    }

    func stop() {
        let running: [Process] = lock.withLock {
            defer { processes = [:] }
            return Array(processes.values)
        }
        for process in running where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    private func launch(_ server: String, port: Int, _ arguments: [String], configFile: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [server] + (configFile.map { [$0] } ?? []) + ["--port", String(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", folder.path, "--daemonize", "no", "--loglevel", "warning",
            "--logfile", folder.appendingPathComponent("\(port).log").path] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        lock.withLock { processes[port] = process }
        try wait("redis-server on port \(port)") { self.cli(port, ["PING"]).contains("PONG") }
    }

    /// `redis-cli` against 127.0.0.1:`port` (with the password): its output, "" when it failed.
    private func cli(_ port: Int, _ command: [String]) -> String {
        let outcome = try? ChildProcess.run(["redis-cli", "-p", String(port), "-a", Self.password, "--no-auth-warning"] + command,
                                            captureOutput: true)
        return outcome?.status == 0 ? outcome?.output ?? "" : ""
    }

    /// Polls `condition` every 50 ms for up to 30 s.
    private func wait(_ what: String, _ condition: () -> Bool) throws {
        for _ in 0..<600 {
            if condition() { return }
            usleep(50_000)
        }
        throw BenchmarkError.failed("timed out waiting for \(what)")
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchmarkError.failed("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BenchmarkError.failed("cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

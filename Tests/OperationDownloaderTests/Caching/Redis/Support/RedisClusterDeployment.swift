import Foundation
import TestRequirements
@testable import OperationDownloader

/// A Redis Cluster of three primaries with a replica each, made by `redis-cli --cluster create` from six
/// redis-servers of the test's own on free loopback ports (each with a free cluster-bus port too), with a short
/// `cluster-node-timeout` so that a replica is promoted a few seconds after its primary dies. `stop()` stops them.
final class RedisClusterDeployment: @unchecked Sendable {  // immutable after init (servers are thread-safe)
    let nodes: [RedisServer]
    let password: String?

    private init(nodes: [RedisServer], password: String?) {
        self.nodes = nodes
        self.password = password
    }

    static func start(password: String? = nil, nodeTimeoutMilliseconds: Int = 1000) async throws -> RedisClusterDeployment {
        guard let cli = Requirement.redisCLIPath else { throw RedisServerFailure(message: "no redis-cli") }
        var nodes: [RedisServer] = []
        do {
            // Started at once: each start waits for python and redis to come up.
            let results = await withTaskGroup(of: Result<RedisServer, any Error>.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        await outcome {
                            let busPort = try LoopbackPort.free()
                            // No diskless-sync delay (5 s by default): a replica that never synced cannot be promoted.
                            var arguments = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", String(busPort),
                                             "--cluster-node-timeout", String(nodeTimeoutMilliseconds), "--cluster-require-full-coverage", "no",
                                             "--repl-diskless-sync-delay", "0"]
                            if let password { arguments += ["--requirepass", password, "--masterauth", password] }
                            return try await RedisServer.start(arguments: arguments)
                        }
                    }
                }
                var results: [Result<RedisServer, any Error>] = []
                for await result in group { results.append(result) }
                return results
            }
            nodes = results.compactMap { try? $0.get() }
            for result in results { _ = try result.get() }
            var create = ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + ["--cluster-replicas", "1", "--cluster-yes"]
            if let password { create += ["-a", password, "--no-auth-warning"] }
            let status = try await offCooperativePool { [create] in Result { try Self.run(cli, create) } }.get()
            guard status == 0 else { throw RedisServerFailure(message: "redis-cli --cluster create failed (\(status))") }
            let deployment = RedisClusterDeployment(nodes: nodes, password: password)
            try await waitFor("the Cluster to be ready, every replica in sync") { [nodes] in
                nodes.allSatisfy { node in
                    let probe = RedisProbe(node, password: password)
                    guard (try? probe.command("CLUSTER", "INFO").text?.contains("cluster_state:ok")) == true,
                          let replication = try? probe.command("INFO", "replication").text else { return false }
                    return replication.contains("role:master") || replication.contains("master_link_status:up")
                }
            }
            return deployment
        } catch {
            for node in nodes { node.stop() }
            throw error
        }
    }

    /// `redis-cluster://[:password@]127.0.0.1:p1,127.0.0.1:p2` (two seeds are enough: the map names the rest).
    func url(query: String = "") -> String {
        let credentials = password.map { ":\($0)@" } ?? ""
        return "redis-cluster://\(credentials)" + nodes.prefix(2).map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
            + (query.isEmpty ? "" : "?" + query)
    }

    func probe(_ node: RedisServer) -> RedisProbe { RedisProbe(node, password: password) }

    /// The slot map as `CLUSTER SLOTS` on the first living node says.
    func slotMap() -> RedisClusterSlotMap? {
        for node in nodes {
            guard let reply = try? probe(node).command("CLUSTER", "SLOTS"),
                  let map = RedisClusterSlotMap(clusterSlots: reply, askedNode: RedisNodeAddress(host: "127.0.0.1", port: node.port)) else { continue }
            return map
        }
        return nil
    }

    /// The node that serves `key`'s slot now.
    func owner(of key: String) -> RedisServer? {
        guard let owner = slotMap()?.node(for: RedisClusterSlotMap.slot(of: Data(key.utf8))) else { return nil }
        return nodes.first { $0.port == owner.port }
    }

    /// A node's cluster ID (`CLUSTER MYID`).
    func id(of node: RedisServer) throws -> String {
        try probe(node).command("CLUSTER", "MYID").text ?? ""
    }

    func stop() {
        for node in nodes { node.stop() }
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

extension Requirement {
    /// `redis-cli` (Debian's redis-tools), which makes a Cluster (`--cluster create`).
    static let redisCLI = Requirement("redis-cli", install: "apt-get install redis-tools") {
        redisCLIPath == nil ? "no redis-cli on PATH" : nil
    }

    static var redisCLIPath: String? { Executables.find("redis-cli") }
}

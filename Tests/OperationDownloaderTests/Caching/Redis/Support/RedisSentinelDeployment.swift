import Foundation
import TestRequirements
@testable import OperationDownloader

/// A primary, its replica and three Sentinels (quorum 2), all redis-servers of the test's own on free loopback
/// ports, with short failure detection (`down-after-milliseconds`) so that a failover takes a few seconds.
/// With a password, every node and every Sentinel requires it. `stop()` stops them all.
final class RedisSentinelDeployment: @unchecked Sendable {  // immutable after init (servers are thread-safe)
    static let primaryName = "mymaster"

    let primary: RedisServer
    let replica: RedisServer
    let sentinels: [RedisServer]
    let password: String?

    private init(primary: RedisServer, replica: RedisServer, sentinels: [RedisServer], password: String?) {
        self.primary = primary
        self.replica = replica
        self.sentinels = sentinels
        self.password = password
    }

    /// Starts it all and waits (bounded) until the Sentinels know the replica and each other: a failover can then
    /// happen.
    static func start(password: String? = nil, downAfterMilliseconds: Int = 1000) async throws -> RedisSentinelDeployment {
        // No diskless-sync delay (5 s by default): the replica syncs at once.
        let auth = (password.map { ["--requirepass", $0, "--masterauth", $0] } ?? []) + ["--repl-diskless-sync-delay", "0"]
        let primary = try await RedisServer.start(arguments: auth)
        var started = [primary]
        do {
            let replica = try await RedisServer.start(arguments: auth + ["--replicaof", "127.0.0.1", String(primary.port)])
            started.append(replica)
            try await waitFor("the replica to sync") {
                (try? RedisProbe(replica, password: password).command("INFO", "replication").text?.contains("master_link_status:up")) == true
            }
            var configuration = """
                sentinel resolve-hostnames no
                sentinel monitor \(primaryName) 127.0.0.1 \(primary.port) 2
                sentinel down-after-milliseconds \(primaryName) \(downAfterMilliseconds)
                sentinel failover-timeout \(primaryName) \(max(3000, downAfterMilliseconds * 3))
                sentinel parallel-syncs \(primaryName) 1

                """
            if let password {
                configuration += "sentinel auth-pass \(primaryName) \(password)\nrequirepass \(password)\nsentinel sentinel-pass \(password)\n"
            }
            // Started at once: each start waits for python and redis to come up.
            let results = await withTaskGroup(of: Result<RedisServer, any Error>.self) { [configuration] group in
                for _ in 0..<3 {
                    group.addTask { await outcome { try await RedisServer.start(arguments: ["--sentinel"], configuration: configuration) } }
                }
                var results: [Result<RedisServer, any Error>] = []
                for await result in group { results.append(result) }
                return results
            }
            started += results.compactMap { try? $0.get() }
            let sentinels = try results.map { try $0.get() }
            let deployment = RedisSentinelDeployment(primary: primary, replica: replica, sentinels: sentinels, password: password)
            try await waitFor("the Sentinels to know the replica and each other") { [sentinels] in
                sentinels.allSatisfy { sentinel in
                    let probe = RedisProbe(sentinel, password: password)
                    let replicas = (try? probe.command("SENTINEL", "REPLICAS", primaryName).elements?.count) ?? 0
                    let others = (try? probe.command("SENTINEL", "SENTINELS", primaryName).elements?.count) ?? 0
                    return replicas == 1 && others == 2
                }
            }
            return deployment
        } catch {
            for server in started { server.stop() }
            throw error
        }
    }

    /// `redis-sentinel://[:password@]127.0.0.1:s1,127.0.0.1:s2,127.0.0.1:s3/mymaster[/db]`.
    func url(database: Int = 0, query: String = "") -> String {
        let credentials = password.map { ":\($0)@" } ?? ""
        return "redis-sentinel://\(credentials)" + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
            + "/\(Self.primaryName)/\(database)" + (query.isEmpty ? "" : "?" + query)
    }

    /// The primary's port as the first Sentinel that answers names it.
    func primaryPort() -> Int? {
        for sentinel in sentinels {
            guard let parts = try? RedisProbe(sentinel, password: password).command("SENTINEL", "get-master-addr-by-name", Self.primaryName).elements,
                  parts.count == 2, let port = parts[1].text.flatMap(Int.init) else { continue }
            return port
        }
        return nil
    }

    /// A probe of the node now serving as primary (the replica after a failover).
    func primaryProbe() -> RedisProbe? {
        guard let port = primaryPort() else { return nil }
        return RedisProbe([primary, replica].first { $0.port == port } ?? primary, password: password)
    }

    func stop() {
        for server in sentinels + [replica, primary] { server.stop() }
    }
}

/// Waits (bounded: 60 s, polling every 50 ms, off the cooperative pool) until `condition` holds; throws naming `what`.
func waitFor(_ what: String, timeout: TimeInterval = 60, _ condition: @escaping @Sendable () -> Bool) async throws {
    let held = await offCooperativePool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }
    guard held else { throw RedisServerFailure(message: "timed out waiting for \(what)") }
}

/// `body`'s value or error, as a Result (Result's own initializer takes no async body).
func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

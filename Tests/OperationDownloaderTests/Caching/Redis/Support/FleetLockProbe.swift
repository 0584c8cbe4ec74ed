import Foundation
import Testing
@testable import OperationDownloader

/// What the single-flight tests read from a test's redis-server: a URL's lock and its token, the attempts made on
/// it (from the server's own command log), and the connections the server accepted and holds.
struct FleetLockProbe {
    let redis: RedisProbe
    let keys: RedisKeySpace

    init(_ server: RedisServer, prefix: String = "od") {
        redis = RedisProbe(server)
        keys = RedisKeySpace(prefix: prefix)
    }

    /// redis-server arguments that keep every command in its slow log (threshold 0 µs), so `lockAttempts` can
    /// count them: Redis's own record of what each client asked, with no client-side hook.
    static let commandLogArguments = ["--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000"]

    /// How long after a lock's lifetime a waiter may take to take a dead holder's lock over: polling (5 ms) and
    /// process scheduling on a loaded two-core machine, TSan builds included. Far below the `max_wait` the tests
    /// give the waiter, past which it would fetch without the lock anyway.
    static let takeOverMargin: TimeInterval = 8

    /// The name this probe's connections give themselves, so `connectedClients` can leave them out.
    static let clientName = "od-test-probe"

    /// One command on a connection of its own, named `clientName` first.
    func command(_ arguments: any RedisArgument...) throws -> RedisReply {
        var endpoint = try RedisEndpoint(url: redis.server.url())
        endpoint.database = 0
        let connection = try RedisConnection(endpoint: endpoint, connectTimeout: 5, commandTimeout: 10)
        let replies = try connection.pipeline([RedisCommand.make("CLIENT", "SETNAME", Self.clientName), arguments.map(\.redisBytes)])
        return replies.last ?? .null
    }

    /// The Redis key of `url`'s single-flight lock.
    func lockKey(of url: URL) -> Data {
        keys.lockKey(HTTPCacheKey.fileName(for: HTTPCacheKey.key(for: url) ?? url.absoluteString))
    }

    /// The token in `url`'s lock (its holder's, or the `done` marker), nil when nobody holds it.
    func lockToken(of url: URL) throws -> Data? {
        try command("GET", lockKey(of: url)).data
    }

    /// How many times a client asked for `url`'s lock (`SET <lock> <token> NX PX …`), from the command log
    /// (needs a server started with `commandLogArguments`).
    func lockAttempts(on url: URL) throws -> Int {
        guard case .array(let entries) = try command("SLOWLOG", "GET", -1) else { return 0 }
        let key = lockKey(of: url)
        return entries.filter { entry in
            // An entry: id, time, duration, the command's arguments, client address, client name.
            guard case .array(let fields) = entry, fields.count > 3, case .array(let arguments) = fields[3] else { return false }
            let words = arguments.compactMap(\.data)
            return words.count >= 4 && String(decoding: words[0], as: UTF8.self).uppercased() == "SET" && words[1] == key
                && words.dropFirst(3).contains { String(decoding: $0, as: UTF8.self).uppercased() == "NX" }
        }.count
    }

    /// Waits (a bound against hangs, polling the command log every 50 ms) until `count` attempts on `url`'s lock
    /// were made; returns how many were.
    func waitForLockAttempts(on url: URL, count: Int, timeout: TimeInterval = 120) async -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = 0
        repeat {
            seen = (try? lockAttempts(on: url)) ?? seen
            if seen >= count { return seen }
            try? await Task.sleep(nanoseconds: 50_000_000)
        } while Date() < deadline
        return seen
    }

    /// A field of `INFO stats` (`total_connections_received`, `total_commands_processed`), this call's own
    /// connection and command included.
    func statistic(_ name: String) throws -> Int {
        let text = try command("INFO", "stats").data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let line = text.split(whereSeparator: \.isNewline).first { $0.hasPrefix(name + ":") }
        return line.flatMap { Int($0.dropFirst(name.count + 1).prefix { $0.isNumber }) } ?? -1
    }

    /// Clients connected now (`CLIENT LIST`), this probe's connections (named `clientName`) not counted.
    func connectedClients() throws -> Int {
        let text = try command("CLIENT", "LIST").data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return text.split(whereSeparator: \.isNewline).filter { !$0.contains(" name=\(Self.clientName) ") }.count
    }
}

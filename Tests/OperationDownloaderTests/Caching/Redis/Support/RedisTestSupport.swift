import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// A direct connection to a test's redis-server, to look at and tamper with what the cache wrote.
struct RedisProbe {
    let server: RedisServer
    var password: String?
    var user: String?

    init(_ server: RedisServer, user: String? = nil, password: String? = nil) {
        self.server = server
        self.user = user
        self.password = password
    }

    func command(_ arguments: any RedisArgument...) throws -> RedisReply {
        var endpoint = try RedisEndpoint(url: server.url(user: user, password: password))
        endpoint.database = 0
        let connection = try RedisConnection(endpoint: endpoint, connectTimeout: 5, commandTimeout: 10)
        return try connection.command(arguments.map(\.redisBytes))
    }

    /// Every key (KEYS is fine on a test server).
    func keys(_ pattern: String = "*") throws -> [String] {
        guard case .array(let items) = try command("KEYS", pattern) else { return [] }
        return items.compactMap(\.data).map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    func get(_ key: String) throws -> Data? {
        try command("GET", key).data
    }

    /// A number from `INFO` ("total_net_output_bytes", "used_memory").
    func info(_ field: String) throws -> Int? {
        guard let text = try command("INFO").data.map({ String(decoding: $0, as: UTF8.self) }) else { return nil }
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).prefix { $0.isNumber })
        }
        return nil
    }

    /// Milliseconds to live (-1: no expiry, -2: no key).
    func pttl(_ key: String) throws -> Int {
        guard case .integer(let value) = try command("PTTL", key) else { return -3 }
        return value
    }
}

/// Collects warnings from `HTTPImageCache.warningHandler`.
final class WarningLog: @unchecked Sendable {  // `messages` guarded by `lock`
    private let lock = NSLock()
    private var messages: [String] = []
    func append(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}

enum RedisCacheFixtures {
    /// The Redis key of `url`'s primary entry under `prefix`.
    static func entryKey(for url: URL, prefix: String = "od") -> String {
        let name = HTTPCacheKey.fileName(for: HTTPCacheKey.key(for: url) ?? "")
        return prefix + ":v2:{" + name.dropLast(HTTPCacheDirectory.entryExtension.count) + "}"
    }

    /// The Redis key of `url`'s single-flight lock under `prefix`.
    static func lockKey(for url: URL, prefix: String = "od") -> String {
        entryKey(for: url, prefix: prefix) + ":lock"
    }

    /// Options for tests: quick back-off, short lock lifetime; timeouts generous enough for a loaded machine.
    static func options(prefix: String = "od") -> RedisCacheOptions {
        var options = RedisCacheOptions(keyPrefix: prefix)
        options.commandTimeout = 2
        options.connectTimeout = 1
        options.retryInterval = 0.2
        options.lockTimeout = 3
        return options
    }
}

extension HTTPImageCache {
    /// The Redis tier of a cache made with `init(redis:...)` (or tiers with one Redis tier).
    var redisTier: HTTPCacheTier? { layer.tiers.first { $0.bytes is RedisByteStore } }
    /// That tier's byte store, and through it the client (`.client`).
    var redisByteStore: RedisByteStore? { redisTier?.bytes as? RedisByteStore }
}

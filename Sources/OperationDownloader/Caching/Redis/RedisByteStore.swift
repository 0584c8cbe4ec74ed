import Foundation

/// The bytes of an `HTTPImageCache`'s entries in Redis, shared by every process (and machine) that uses the same
/// server and key prefix: the byte store under the cache layer, a thin adapter over `RedisConnectionPool`.
///
/// - One `SET key value PX ttl` per write (atomic: a reader sees the old value or the new one), under
///   `RedisKeySpace` keys.
/// - A value's version is its 56-byte header (dates and both checksums): a remembered value is confirmed with
///   one `GETRANGE` of it, so a body crosses the network once per process, not once per read.
/// - A conditional delete compares that header in a script, so a value replaced meanwhile is kept.
/// - Redis unavailable (down, slow, refusing AUTH): reads are `.unavailable`, writes `.unavailable` (the pool's
///   breaker and its one warning per outage); an error reply to a write (`OOM`, `READONLY`) is a refusal.
final class RedisByteStore: HTTPCacheByteStore, Sendable {
    static let headerLength = HTTPCacheEntryFile.headerSize

    let pool: RedisConnectionPool
    let keys: RedisKeySpace

    init(pool: RedisConnectionPool, keys: RedisKeySpace) {
        self.pool = pool
        self.keys = keys
    }

    func get(_ name: String, maximumLength: Int, unlessVersion version: HTTPCacheValueVersion?) -> HTTPCacheByteRead {
        let key = keys.entryKey(name)
        if let version {
            guard let header = pool.command(RedisCommand.make("GETRANGE", key, 0, Self.headerLength - 1)) else { return .unavailable }
            if header.data == version.bytes { return .unchanged }
            // Replaced or gone: read it whole; failing now, it is a miss (the remembered value is outdated).
            guard case .string(let value)? = pool.command(RedisCommand.make("GET", key)), value.count <= maximumLength else { return .absent }
            return .value(value, Self.version(of: value))
        }
        guard let reply = pool.command(RedisCommand.make("GET", key)) else { return .unavailable }
        guard case .string(let value) = reply, value.count <= maximumLength else { return .absent }
        return .value(value, Self.version(of: value))
    }

    func set(_ name: String, _ value: Data, timeToLive: TimeInterval?) throws(HTTPCacheByteStoreError) -> HTTPCacheValueVersion {
        var command = RedisCommand.make("SET", keys.entryKey(name), value)
        if let timeToLive { command += RedisCommand.make("PX", max(1, Int((timeToLive * 1000).rounded()))) }
        let reply = pool.command(command)
        if reply?.isOK == true { return Self.version(of: value) }
        guard let message = reply?.errorMessage else { throw .unavailable }
        throw .refused(warning: "HTTPImageCache: Redis at \(pool.endpoint.displayName) refuses writes (\(message)); responses are not shared "
            + "while this lasts (see Docs/Scaling.md: maxmemory-policy allkeys-lru)",
                       metadata: ["redis.endpoint": pool.endpoint.displayName, "error": message])
    }

    func delete(_ names: [String]) {
        guard !names.isEmpty else { return }
        _ = pool.command(RedisCommand.make("DEL", names.map(keys.entryKey)))
    }

    func delete(_ name: String, ifVersion version: HTTPCacheValueVersion) {
        let script = "if redis.call('GETRANGE', KEYS[1], 0, \(Self.headerLength - 1)) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        _ = pool.command(RedisCommand.make("EVAL", script, 1, keys.entryKey(name), version.bytes))
    }

    /// Deletes every key of this cache's prefix (SCAN in batches, bounded).
    func deleteAll() {
        var cursor = Data("0".utf8)
        for _ in 0..<100_000 {
            guard case .array(let parts)? = pool.command(RedisCommand.make("SCAN", cursor, "MATCH", keys.scanPattern, "COUNT", 1000)),
                  parts.count == 2, let next = parts[0].data, case .array(let found) = parts[1] else { return }
            let names = found.compactMap(\.data)
            if !names.isEmpty { _ = pool.command(RedisCommand.make("DEL", names)) }
            cursor = next
            if cursor == Data("0".utf8) { return }
        }
    }

    private static func version(of value: Data) -> HTTPCacheValueVersion {
        HTTPCacheValueVersion(bytes: Data(value.prefix(headerLength)))
    }
}

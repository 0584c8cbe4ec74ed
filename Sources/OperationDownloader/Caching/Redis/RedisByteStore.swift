import Foundation

/// The bytes of an `HTTPImageCache`'s entries in Redis, shared by every process (and machine) that uses the same
/// deployment and key prefix: the byte store under the cache layer, over the package's own client
/// (`RedisClient`: one server, a Sentinel's primary, or a Cluster).
///
/// - One `SET key value PX ttl` per write (atomic: a reader sees the old value or the new one), under
///   `RedisKeySpace` keys. A write that meets a failover lands on the new primary (waiting at most a lock's
///   lifetime); an error reply (`OOM`, `READONLY`, `NOPERM`) is a refusal, whose warning names it.
/// - Reads are bounded: a value is read with `GETRANGE 0 <maximumLength>` (at most one byte more than anything
///   this cache stores) and its `PTTL` in the same round trip (a missing key and an empty value both read as "").
///   A longer value — whoever put it there — costs at most that much, and is deleted.
/// - A value's version is its 56-byte header (dates and both checksums): a remembered value is confirmed with one
///   `GETRANGE` of it, so a body crosses the network once per process, not once per read.
/// - A conditional delete compares that header in a script, so a value replaced meanwhile is kept.
/// - Redis unavailable (down, slow, refusing AUTH): reads and writes are `.unavailable` (the node's breaker and its
///   one warning per outage are the client's).
final class RedisByteStore: HTTPCacheByteStore, Sendable {
    static let headerLength = HTTPCacheEntryFile.headerSize

    let client: RedisClient
    let keys: RedisKeySpace
    /// How long a write waits for a failover under way (a lock's lifetime).
    let failoverWait: TimeInterval

    init(client: RedisClient, keys: RedisKeySpace, failoverWait: TimeInterval) {
        self.client = client
        self.keys = keys
        self.failoverWait = failoverWait
    }

    func get(_ name: String, maximumLength: Int, unlessVersion version: HTTPCacheValueVersion?) -> HTTPCacheByteRead {
        let key = keys.entryKey(name)
        if let version {
            let header = RedisRequest(RedisCommand.make("GETRANGE", key, 0, Self.headerLength - 1), key: key,
                                      limits: RESPLimits.standard.bulk(Self.headerLength))
            guard case .success(let reply) = client.command(header) else { return .unavailable }
            if reply.data == version.bytes { return .unchanged }
            // Replaced or gone: read it whole; failing now, it is a miss (the remembered value is outdated).
            let read = value(key, name: name, maximumLength: maximumLength)
            if case .unavailable = read { return .absent }
            return read
        }
        return value(key, name: name, maximumLength: maximumLength)
    }

    /// The value at `key`, read as at most `maximumLength` + 1 bytes.
    private func value(_ key: Data, name: String, maximumLength: Int) -> HTTPCacheByteRead {
        let limit = max(0, maximumLength)
        let replies = client.pipeline([
            RedisRequest(RedisCommand.make("GETRANGE", key, 0, limit), key: key, limits: RESPLimits.standard.bulk(limit + 1)),
            RedisRequest(RedisCommand.make("PTTL", key), key: key),
        ])
        guard case .success(let reply) = replies[0], case .success(let expiry) = replies[1] else { return .unavailable }
        guard case .string(let value) = reply, case .integer(let milliseconds) = expiry, milliseconds != -2 else { return .absent }
        guard value.count <= limit else {
            delete(name, ifVersion: Self.version(of: value))
            return .absent
        }
        return .value(value, Self.version(of: value))
    }

    func set(_ name: String, _ value: Data, timeToLive: TimeInterval?) throws(HTTPCacheByteStoreError) -> HTTPCacheValueVersion {
        let key = keys.entryKey(name)
        var command = RedisCommand.make("SET", key, value)
        if let timeToLive { command += RedisCommand.make("PX", max(1, Int((timeToLive * 1000).rounded()))) }
        let result = client.pipelineAcrossFailover([RedisRequest(command, key: key)], until: RedisDeadline(in: failoverWait))[0]
        guard case .success(let reply) = result else { throw .unavailable }
        if reply.isOK { return Self.version(of: value) }
        let message = reply.errorMessage ?? "answered \(reply)"
        throw .refused(warning: refusal(message), metadata: ["redis.endpoint": client.displayName, "error": String(message.prefix(200))])
    }

    /// The warning for a write the server refused, naming its answer and what to do about it.
    private func refusal(_ message: String) -> String {
        let code = message.prefix { $0 != " " }
        client.events.error(code.lowercased(), node: nil)
        let advice: String
        switch code {
        case "OOM": advice = "Redis is full: see Docs/Scaling.md, maxmemory-policy allkeys-lru"
        case "READONLY": advice = "this node is a replica: point the URL at the primary, or use redis-sentinel://"
        case "NOPERM": advice = "the ACL user may not write these keys: see Docs/Scaling.md, Security"
        default: advice = "see Docs/Scaling.md"
        }
        return "HTTPImageCache: Redis \(client.displayName) refuses writes (\(message.prefix(200))); responses are not shared "
            + "while this lasts (\(advice))"
    }

    func delete(_ names: [String]) {
        guard !names.isEmpty else { return }
        // One DEL per key: in a Cluster the keys live in different slots.
        let requests = names.map { name in
            let key = keys.entryKey(name)
            return RedisRequest(RedisCommand.make("DEL", key), key: key)
        }
        _ = client.pipelineAcrossFailover(requests, until: RedisDeadline(in: failoverWait))
    }

    func delete(_ name: String, ifVersion version: HTTPCacheValueVersion) {
        let script = "if redis.call('GETRANGE', KEYS[1], 0, \(Self.headerLength - 1)) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        let key = keys.entryKey(name)
        _ = client.command(RedisRequest(RedisCommand.make("EVAL", script, 1, key, version.bytes), key: key))
    }

    /// Deletes every key of this cache's prefix (SCAN in batches on every primary, bounded).
    func deleteAll() {
        client.forEachKey(matching: keys.scanPattern) { found in
            _ = client.pipeline(found.map { RedisRequest(RedisCommand.make("DEL", $0), key: $0) })
        }
    }

    private static func version(of value: Data) -> HTTPCacheValueVersion {
        HTTPCacheValueVersion(bytes: Data(value.prefix(headerLength)))
    }
}

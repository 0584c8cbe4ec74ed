import Foundation

/// The entries of an `HTTPImageCache` in Redis, shared by every process (and machine) that uses the same
/// server and key prefix, with this process's memory layer in front.
///
/// - Values are `HTTPCacheEntryFile`s, checksummed as on disk; each is written with ONE `SET ... PX ttl`
///   (atomic; `RedisEntryLifetime` gives the TTL), under `RedisKeySpace` keys. Bodies over
///   `maximumBodySize` are not stored.
/// - A value that fails validation (garbage, truncated, another key's entry) is a miss and is deleted, unless
///   it was replaced meanwhile (the delete compares its first bytes, in a script).
/// - A memory item is served after one `GETRANGE` of the value's 56-byte header shows it unchanged (the header
///   holds the dates and both checksums): a body is sent once per process, not once per read.
/// - Writes the caller does not wait for (a 304 refresh on a network thread) go through a serial queue, in
///   order with every other write; they are served from memory until they land.
/// - Reads are bounded: an entry is read with `GETRANGE 0 <limit>` (the largest entry this cache writes, plus
///   one byte), so a larger value under an entry key — whoever put it there — costs at most that much, and is
///   a miss (and deleted) like any other invalid value.
/// - Redis unavailable (down, slow, full, refusing AUTH): reads miss (memory items are served as they are),
///   writes are dropped, downloads go to the origin; see `RedisConnectionPool` for the breaker and warning. A
///   write that meets a failover (Sentinel, Cluster) lands on the new primary, waiting at most a lock's lifetime.
final class RedisHTTPCacheStore: HTTPCacheStorage, @unchecked Sendable {  // mutable state guarded by `lock`
    static let headerLength = HTTPCacheEntryFile.headerSize

    let client: RedisClient
    let options: RedisCacheOptions
    let keys: RedisKeySpace
    private(set) var flights: HTTPCacheFlights?
    private let ioQueue = DispatchQueue(label: "OperationDownloader.HTTPImageCache.redis")
    private let lock = NSLock()
    private var memory: HTTPCacheMemoryLayer<Data>
    private var _beforeDiskWrite: (@Sendable (String) -> Void)?

    init(deployment: RedisDeployment, options: RedisCacheOptions, memoryCapacity: Int) {
        self.options = options
        self.keys = RedisKeySpace(prefix: options.keyPrefix)
        self.memory = HTTPCacheMemoryLayer(capacity: memoryCapacity)
        self.client = RedisClient(deployment: deployment, options: options)
        if options.singleFlight {
            flights = HTTPCacheFlights(locks: RedisFlightLocks(client: client, keys: keys, options: options))
        }
    }

    /// The largest value this cache reads under an entry key: the largest body it stores, plus room for the
    /// entry's header, key and header fields.
    var maximumEntrySize: Int { maximumBodySize + 1024 * 1024 }

    var isShared: Bool { true }
    var maximumBodySize: Int { max(0, options.maximumBodySize) }
    var diskUsage: Int { 0 }
    var memoryUsage: Int { lock.withLock { memory.usage } }

    var warningHandler: (@Sendable (String) -> Void)? {
        get { client.events.warningHandler }
        set { client.events.warningHandler = newValue }
    }

    var beforeDiskWrite: (@Sendable (String) -> Void)? {
        get { lock.withLock { _beforeDiskWrite } }
        set { lock.withLock { _beforeDiskWrite = newValue } }
    }


    // MARK: Reading

    func read(_ name: String, key: String, url: URL) -> HTTPCacheContent? {
        let entryKey = keys.entryKey(name)
        if let remembered = lock.withLock({ memory.item(forFileName: name) }) {
            if case .removed = remembered.content { return nil }
            guard let identity = remembered.identity else { return remembered.content }
            guard case .success(let reply) = client.command(RedisRequest(RedisCommand.make("GETRANGE", entryKey, 0, Self.headerLength - 1),
                                                                        key: entryKey, limits: RESPLimits.standard.bulk(Self.headerLength))) else {
                // Redis unavailable: this process's memory answers alone.
                return remembered.content
            }
            if reply.data == identity { return remembered.content }
            lock.withLock { memory.remove(fileName: name) }
        }
        let limit = maximumEntrySize
        // GETRANGE answers "" for a missing key as for an empty value: PTTL, in the same round trip, tells them apart.
        let replies = client.pipeline([
            RedisRequest(RedisCommand.make("GETRANGE", entryKey, 0, limit), key: entryKey, limits: RESPLimits.standard.bulk(limit + 1)),
            RedisRequest(RedisCommand.make("PTTL", entryKey), key: entryKey),
        ])
        guard case .success(.string(let value)) = replies[0], case .success(.integer(let expiry)) = replies[1], expiry != -2 else { return nil }
        guard value.count <= limit else {
            discard(entryKey, value: value)
            return nil
        }
        let entry: HTTPCacheEntryFile
        do {
            entry = try HTTPCacheEntryFile.decode(value)
        } catch .unsupportedVersion {
            // Another version of the package shares the server: its entries are left alone.
            return nil
        } catch {
            discard(entryKey, value: value)
            return nil
        }
        guard entry.key == key, let content = Self.content(of: entry, url: url, fileName: name) else {
            discard(entryKey, value: value)
            return nil
        }
        lock.withLock { _ = memory.insert(content, fileName: name, identity: value.prefix(Self.headerLength)) }
        return content
    }

    static func content(of entry: HTTPCacheEntryFile, url: URL, fileName: String) -> HTTPCacheContent? {
        let content = HTTPCacheStore.content(of: entry, url: url, fileName: fileName)
        guard case .response(var response)? = content else { return content }
        response.appliesSharedRules = true
        return .response(response)
    }

    /// Deletes the invalid `value` at `entryKey`, unless another writer replaced it since it was read.
    private func discard(_ entryKey: Data, value: Data) {
        let script = "if redis.call('GETRANGE', KEYS[1], 0, \(Self.headerLength - 1)) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        _ = client.command(RedisRequest(RedisCommand.make("EVAL", script, 1, entryKey, Data(value.prefix(Self.headerLength))), key: entryKey))
    }

    // MARK: Writing

    func write(_ entry: HTTPCacheEntryFile, as name: String, url: URL, wait: Bool) {
        guard let content = Self.content(of: entry, url: url, fileName: name) else { return }
        let serial = lock.withLock { memory.insert(content, fileName: name, identity: nil) }
        let work: @Sendable () -> Void = { [self] in writeOnQueue(entry, name: name, serial: serial) }
        if wait { ioQueue.sync(execute: work) } else { ioQueue.async(execute: work) }
    }

    private func writeOnQueue(_ entry: HTTPCacheEntryFile, name: String, serial: UInt64) {
        lock.withLock { _beforeDiskWrite }?(name)
        let entryKey = keys.entryKey(name)
        let milliseconds = RedisEntryLifetime.milliseconds(for: entry, now: Date(), options: options)
        var identity: Data?
        if milliseconds > 0 {
            let encoded = entry.encoded()
            let request = RedisRequest(RedisCommand.make("SET", entryKey, encoded, "PX", milliseconds), key: entryKey)
            let reply = try? client.pipelineAcrossFailover([request], until: RedisDeadline(in: options.lockTimeout))[0].get()
            if reply?.isOK == true {
                identity = encoded.prefix(Self.headerLength)
                client.events.resolved("writes")
            } else if let message = reply?.errorMessage {
                refused(message)
            }
        } else {
            // Already unusable: the older entry it replaces must not be served either.
            _ = client.pipelineAcrossFailover([RedisRequest(RedisCommand.make("DEL", entryKey), key: entryKey)],
                                              until: RedisDeadline(in: options.lockTimeout))
        }
        lock.withLock { memory.written(name, serial: serial, identity: identity) }
    }

    /// A write refused by the server (out of memory under `maxmemory` with `noeviction`, a read-only replica, an
    /// ACL without SET): one warning until writes work again, naming the cause; downloads are not affected.
    private func refused(_ message: String) {
        let code = message.prefix { $0 != " " }
        client.events.error(code.lowercased(), node: nil)
        let advice: String
        switch code {
        case "OOM": advice = "Redis is full: see Docs/Scaling.md, maxmemory-policy allkeys-lru"
        case "READONLY": advice = "this node is a replica: point the URL at the primary, or use redis-sentinel://"
        case "NOPERM": advice = "the ACL user may not write these keys: see Docs/Scaling.md, Security"
        default: advice = "see Docs/Scaling.md"
        }
        client.events.warn("HTTPImageCache: Redis \(client.displayName) refuses writes (\(message.prefix(200))); responses are not "
            + "shared while this lasts (\(advice))", once: "writes")
    }

    func remove(_ names: [String], wait: Bool) {
        guard !names.isEmpty else { return }
        let serials: [(String, UInt64)] = lock.withLock {
            names.map { ($0, memory.insert(.removed, fileName: $0, identity: nil)) }
        }
        let work: @Sendable () -> Void = { [self] in
            // One DEL per key: in a Cluster the keys live in different slots.
            let requests = names.map { name in
                let key = keys.entryKey(name)
                return RedisRequest(RedisCommand.make("DEL", key), key: key)
            }
            _ = client.pipelineAcrossFailover(requests, until: RedisDeadline(in: options.lockTimeout))
            lock.withLock { for (name, serial) in serials { memory.written(name, serial: serial, identity: nil) } }
        }
        if wait { ioQueue.sync(execute: work) } else { ioQueue.async(execute: work) }
    }

    /// Removes every key of this cache's prefix (SCAN in batches on every primary, bounded), and the memory layer.
    func removeAll() {
        lock.withLock { memory.removeAll() }
        ioQueue.sync {
            _ = client.forEachKey(matching: keys.scanPattern) { found in
                _ = client.pipeline(found.map { RedisRequest(RedisCommand.make("DEL", $0), key: $0) })
            }
        }
    }

    func waitForQueuedWork() {
        ioQueue.sync {}
    }

    /// Redis evicts by itself (TTLs, and `maxmemory` with `allkeys-lru`): nothing to trim here.
    func trim(now: Date) {}
}

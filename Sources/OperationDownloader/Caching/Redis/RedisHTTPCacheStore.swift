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
/// - Redis unavailable (down, slow, full, refusing AUTH): reads miss (memory items are served as they are),
///   writes are dropped, downloads go to the origin; see `RedisConnectionPool` for the breaker and warning.
final class RedisHTTPCacheStore: HTTPCacheStorage, @unchecked Sendable {  // mutable state guarded by `lock`
    static let headerLength = HTTPCacheEntryFile.headerSize

    let pool: RedisConnectionPool
    let options: RedisCacheOptions
    let keys: RedisKeySpace
    private(set) var flights: HTTPCacheFlights?
    private let ioQueue = DispatchQueue(label: "OperationDownloader.HTTPImageCache.redis")
    private let lock = NSLock()
    private var memory: HTTPCacheMemoryLayer<Data>
    /// The warning handler, log hook and metrics sink (Redis errors, the breaker, refused writes).
    let telemetry = CacheTelemetry(storage: "redis")
    private var _beforeDiskWrite: (@Sendable (String) -> Void)?
    private var warnedAboutWrites = false

    init(endpoint: RedisEndpoint, options: RedisCacheOptions, memoryCapacity: Int) {
        self.options = options
        self.keys = RedisKeySpace(prefix: options.keyPrefix)
        self.memory = HTTPCacheMemoryLayer(capacity: memoryCapacity)
        self.pool = RedisConnectionPool(endpoint: endpoint, options: options, telemetry: telemetry)
        if options.singleFlight {
            flights = HTTPCacheFlights(locks: RedisFlightLocks(pool: pool, keys: keys, options: options))
        }
    }

    var isShared: Bool { true }
    var maximumBodySize: Int { max(0, options.maximumBodySize) }
    var diskUsage: Int { 0 }
    var memoryUsage: Int { lock.withLock { memory.usage } }

    var warningHandler: (@Sendable (String) -> Void)? {
        get { telemetry.warningHandler }
        set { telemetry.warningHandler = newValue }
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
            guard let reply = pool.command(RedisCommand.make("GETRANGE", entryKey, 0, Self.headerLength - 1)) else {
                // Redis unavailable: this process's memory answers alone.
                return remembered.content
            }
            if reply.data == identity { return remembered.content }
            lock.withLock { memory.remove(fileName: name) }
        }
        guard case .string(let value)? = pool.command(RedisCommand.make("GET", entryKey)) else { return nil }
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
        _ = pool.command(RedisCommand.make("EVAL", script, 1, entryKey, Data(value.prefix(Self.headerLength))))
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
            let reply = pool.command(RedisCommand.make("SET", entryKey, encoded, "PX", milliseconds))
            if reply?.isOK == true {
                identity = encoded.prefix(Self.headerLength)
            } else if let message = reply?.errorMessage {
                refused(message)
            }
        } else {
            // Already unusable: the older entry it replaces must not be served either.
            _ = pool.command(RedisCommand.make("DEL", entryKey))
        }
        lock.withLock { memory.written(name, serial: serial, identity: identity) }
    }

    /// A write refused by the server (out of memory under `maxmemory` with `noeviction`, a read-only replica):
    /// one warning per cache; downloads are not affected.
    private func refused(_ message: String) {
        telemetry.writeFailed()
        let first = lock.withLock {
            defer { warnedAboutWrites = true }
            return !warnedAboutWrites
        }
        if first {
            telemetry.logger.log(
                .warning, "HTTPImageCache: Redis at \(pool.endpoint.displayName) refuses writes (\(message)); responses are not shared "
                    + "while this lasts (see Docs/Scaling.md: maxmemory-policy allkeys-lru)",
                metadata: ["redis.endpoint": pool.endpoint.displayName, "error": message])
        }
    }

    func remove(_ names: [String], wait: Bool) {
        guard !names.isEmpty else { return }
        let serials: [(String, UInt64)] = lock.withLock {
            names.map { ($0, memory.insert(.removed, fileName: $0, identity: nil)) }
        }
        let work: @Sendable () -> Void = { [self] in
            _ = pool.command(RedisCommand.make("DEL", names.map(keys.entryKey)))
            lock.withLock { for (name, serial) in serials { memory.written(name, serial: serial, identity: nil) } }
        }
        if wait { ioQueue.sync(execute: work) } else { ioQueue.async(execute: work) }
    }

    /// Removes every key of this cache's prefix (SCAN in batches, bounded), and the memory layer.
    func removeAll() {
        lock.withLock { memory.removeAll() }
        ioQueue.sync {
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
    }

    func waitForQueuedWork() {
        ioQueue.sync {}
    }

    /// Redis evicts by itself (TTLs, and `maxmemory` with `allkeys-lru`): nothing to trim here.
    func trim(now: Date) {}
}

import Foundation

/// The one layer between `HTTPImageCache` and the bytes of its entries, whatever holds them: the memory layer
/// in front, validation of what is read, the write-behind queue, tombstones, the warnings, and the fleet's
/// shared-fetch coordination. Below it, one or more tiers (`HTTPCacheTier`), each a small byte store (get, set
/// with a TTL, delete): a directory, Redis, or both, nearest first.
///
/// - Reads: memory first; a remembered item is served after its tier confirms it still holds that value (a
///   `stat`, a header read), so another process's newer entry or removal shows at once; otherwise the tiers in
///   order. Invalid values (garbage, cut, another key's entry) are misses and are deleted, unless replaced
///   meanwhile; values of another format version are left alone. A hit in a lower tier is copied, byte for
///   byte (its dates with it), into the tiers above it.
/// - Writes go to every tier (each takes what its rules allow: `HTTPCacheTier.placement`) on one serial queue,
///   in order with every other write and removal: a write the caller does not wait for (a 304 refresh on the
///   session's delegate queue) can never land after a later store or removal of the same name. Its content
///   is in memory at once (a pending item, trusted as it is), and a queued removal reads as absent at once
///   (a tombstone); each write carries a serial so that a late-landing one never overrides a newer item.
/// - A tier that refuses writes (full disk, Redis out of memory or read-only) is warned about once.
final class HTTPCacheLayer: @unchecked Sendable {  // `memory`, `warnedTiers` guarded by `lock`
    /// Where a remembered value is held: the nearest tier that has it, and its version there.
    struct Origin: Equatable {
        let tier: Int
        let version: HTTPCacheValueVersion
    }

    let tiers: [HTTPCacheTier]
    /// RFC 9111's shared-cache rules apply to everything this layer stores and serves.
    let isShared: Bool
    /// Its warnings, log messages and metrics (refused writes; its Redis connections report through it too).
    let telemetry: CacheTelemetry
    /// Fleet-wide single-flight for misses and revalidations (a shared tier), or nil.
    let flights: HTTPCacheFlights?
    /// Bodies larger than this fit in no tier.
    let maximumBodySize: Int
    private let ioQueue: DispatchQueue
    private let lock = NSLock()
    private var memory: HTTPCacheMemoryLayer<Origin>
    private var warnedTiers = Set<Int>()

    init(tiers: [HTTPCacheTier], memoryCapacity: Int, isShared: Bool, telemetry: CacheTelemetry,
         flights: HTTPCacheFlights? = nil, queueLabel: String = "OperationDownloader.HTTPImageCache.io") {
        self.tiers = tiers
        self.isShared = isShared
        self.telemetry = telemetry
        self.flights = flights
        self.maximumBodySize = max(0, tiers.map(\.maximumBodySize).max() ?? 0)
        self.memory = HTTPCacheMemoryLayer(capacity: memoryCapacity)
        self.ioQueue = DispatchQueue(label: queueLabel)
    }

    var memoryUsage: Int { lock.withLock { memory.usage } }

    // MARK: Reading

    /// What a read found, and where: "memory" (the memory layer answered) or the tier's `storage`.
    struct Read {
        let content: HTTPCacheContent
        let storage: String
    }

    /// A valid value read from a tier, not yet remembered or copied up.
    private struct Found {
        let name: String
        let content: HTTPCacheContent
        let entry: HTTPCacheEntryFile
        let value: Data
        let origin: Origin
    }

    /// The content of entry `name` for `key`: from memory while its tier still holds it (or cannot tell), else
    /// from the nearest tier holding a valid value; marks it as recently used. With several tiers and
    /// `preferring`, a content it rejects (a stale response) is passed over for one further down that it accepts
    /// (another process's fresher copy); with none accepted, the nearest is the answer.
    func read(_ name: String, key: String, url: URL, preferring isPreferred: ((HTTPCacheContent) -> Bool)? = nil) -> Read? {
        let single = tiers.count == 1
        var fallback: Read?
        var fallbackFound: Found?
        var skipped: Int?
        if let remembered = lock.withLock({ memory.item(forFileName: name) }) {
            if case .removed = remembered.content { return nil }
            // A pending item is newer than anything stored.
            guard let origin = remembered.identity else { return Read(content: remembered.content, storage: "memory") }
            let tier = tiers[origin.tier]
            switch tier.bytes.get(name, maximumLength: tier.maximumValueLength, unlessVersion: origin.version) {
            case .unchanged, .unavailable:
                // Unavailable: this process's memory answers alone.
                let read = Read(content: remembered.content, storage: "memory")
                if single || isPreferred?(remembered.content) != false { return read }
                fallback = read
            case .value(let value, let version):
                lock.withLock { memory.remove(fileName: name) }
                if let found = validate(value, version: version, from: origin.tier, name: name, key: key, url: url) {
                    if single || isPreferred?(found.content) != false { return adopt(found) }
                    fallbackFound = found
                }
            case .absent:
                lock.withLock { memory.remove(fileName: name) }
            }
            skipped = origin.tier
        }
        for index in tiers.indices where index != skipped {
            let tier = tiers[index]
            guard case .value(let value, let version) = tier.bytes.get(name, maximumLength: tier.maximumValueLength, unlessVersion: nil),
                  let found = validate(value, version: version, from: index, name: name, key: key, url: url) else { continue }
            if isPreferred?(found.content) != false { return adopt(found) }
            if fallback == nil && fallbackFound == nil { fallbackFound = found }
        }
        return fallback ?? fallbackFound.map(adopt)
    }

    /// Decodes and checks `value`, read from tier `index`, as the entry `name` of `key`; an invalid one is deleted
    /// from its tier unless replaced meanwhile (another format version is left alone).
    private func validate(_ value: Data, version: HTTPCacheValueVersion, from index: Int, name: String, key: String,
                          url: URL) -> Found? {
        let entry: HTTPCacheEntryFile
        do {
            entry = try HTTPCacheEntryFile.decode(value)
        } catch .unsupportedVersion {
            // Another version of the package shares the storage: its entries are left alone.
            return nil
        } catch {
            tiers[index].bytes.delete(name, ifVersion: version)
            return nil
        }
        guard entry.key == key, let content = content(of: entry, url: url, fileName: name) else {
            // A valid entry under the wrong name was not written by this cache for this key.
            tiers[index].bytes.delete(name, ifVersion: version)
            return nil
        }
        return Found(name: name, content: content, entry: entry, value: value, origin: Origin(tier: index, version: version))
    }

    /// Remembers `found`; found below the nearest tier, it is also copied, byte for byte, into the tiers above
    /// (on the write queue; served from memory meanwhile).
    private func adopt(_ found: Found) -> Read {
        let name = found.name
        let read = Read(content: found.content, storage: tiers[found.origin.tier].storage)
        guard found.origin.tier > 0 else {
            lock.withLock { _ = memory.insert(found.content, fileName: name, identity: found.origin) }
            return read
        }
        let serial = lock.withLock { memory.insert(found.content, fileName: name, identity: nil) }
        ioQueue.async { [self] in
            let nearest = place(found.value, entry: found.entry, name: name, in: 0..<found.origin.tier, now: Date(), deleting: false)
            lock.withLock { memory.written(name, serial: serial, identity: nearest ?? found.origin) }
        }
        return read
    }

    func content(of entry: HTTPCacheEntryFile, url: URL, fileName: String) -> HTTPCacheContent? {
        switch entry.kind {
        case .variantIndex:
            let fields = HTTPVary(entry.headers["Vary"]).fieldNames
            guard !fields.isEmpty else { return nil }
            return .variantIndex(fields: fields, generation: String(decoding: entry.body, as: UTF8.self))
        case .response, .headersOnly:
            guard var response = CachedHTTPResponse(entry: entry, url: url, fileName: fileName) else { return nil }
            response.appliesSharedRules = isShared
            return .response(response)
        }
    }

    // MARK: Writing

    /// Writes `entry` as `name` into every tier. With `wait`, returns after the writes landed (or failed);
    /// without, returns at once: the content is served from memory until they land.
    func write(_ entry: HTTPCacheEntryFile, as name: String, url: URL, wait: Bool) {
        guard let content = content(of: entry, url: url, fileName: name) else { return }
        let serial = lock.withLock { memory.insert(content, fileName: name, identity: nil) }
        let work: @Sendable () -> Void = { [self] in
            let nearest = place(entry.encoded(), entry: entry, name: name, in: tiers.indices, now: Date(), deleting: true)
            lock.withLock { memory.written(name, serial: serial, identity: nearest) }
        }
        if wait { ioQueue.sync(execute: work) } else { ioQueue.async(execute: work) }
    }

    /// Stores `value` (`entry` encoded) as `name` in the tiers `indexes`, as each one's rules allow; a tier that
    /// does not take it deletes its older value when `deleting`. Returns where the nearest stored copy is.
    private func place(_ value: Data, entry: HTTPCacheEntryFile, name: String, in indexes: Range<Int>, now: Date,
                       deleting: Bool) -> Origin? {
        var nearest: Origin?
        for index in indexes {
            let tier = tiers[index]
            switch tier.placement(of: entry, now: now) {
            case .delete:
                if deleting { tier.bytes.delete([name]) }
            case .store(let timeToLive):
                do {
                    let version = try tier.bytes.set(name, value, timeToLive: timeToLive)
                    if nearest == nil { nearest = Origin(tier: index, version: version) }
                } catch .refused(let warning, let metadata) {
                    telemetry.writeFailed(storage: tier.storage)
                    warnOnce(tier: index, warning, metadata: metadata)
                } catch {
                    // Unavailable: the store has reported its outage.
                }
            }
        }
        return nearest
    }

    /// Removes entries from every tier (and memory). Without `wait` they read as absent at once (a memory
    /// tombstone) until their queued removal lands, in order with queued writes.
    func remove(_ names: [String], wait: Bool) {
        guard !names.isEmpty else { return }
        let serials: [(String, UInt64)] = lock.withLock {
            names.map { ($0, memory.insert(.removed, fileName: $0, identity: nil)) }
        }
        let work: @Sendable () -> Void = { [self] in
            for tier in tiers { tier.bytes.delete(names) }
            lock.withLock { for (name, serial) in serials { memory.written(name, serial: serial, identity: nil) } }
        }
        if wait { ioQueue.sync(execute: work) } else { ioQueue.async(execute: work) }
    }

    /// Removes every entry of every tier, and the memory layer.
    func removeAll() {
        lock.withLock { memory.removeAll() }
        ioQueue.sync { for tier in tiers { tier.bytes.deleteAll() } }
    }

    /// Returns once every queued write and removal has landed.
    func waitForQueuedWork() {
        ioQueue.sync {}
    }

    private func warnOnce(tier index: Int, _ message: String, metadata: [String: String]) {
        guard lock.withLock({ warnedTiers.insert(index).inserted }) else { return }
        telemetry.logger.log(.warning, message, metadata: metadata)
    }
}

extension HTTPCacheLayer.Read {
    var isResponse: Bool {
        if case .response = content { return true }
        return false
    }
}

import Foundation

/// Where an `HTTPImageCache` keeps its entries, behind its memory layer: a directory (`HTTPCacheStore`, a
/// private cache) or Redis (`RedisHTTPCacheStore`, shared by a fleet). Entries are named by
/// `HTTPCacheKey.fileName(for:)` / `variantFileName(...)` and hold `HTTPCacheEntryFile`s, whatever the storage.
protocol HTTPCacheStorage: AnyObject, Sendable {
    /// Shared by several users (RFC 9111 shared-cache rules apply: `private` is not stored, `s-maxage` and
    /// `proxy-revalidate` count, responses to requests with Authorization only where §3.5 allows).
    var isShared: Bool { get }
    /// Bodies larger than this are not stored.
    var maximumBodySize: Int { get }
    /// Receives the storage's warnings (directory not writable, Redis unavailable); nil: standard error.
    var warningHandler: (@Sendable (String) -> Void)? { get set }
    /// The storage's metrics and log messages (Observability/CacheTelemetry.swift).
    var telemetry: CacheTelemetry { get }
    /// Tests: runs before each write reaches the storage, with the entry's name (a slow disk or server).
    var beforeDiskWrite: (@Sendable (String) -> Void)? { get set }
    var memoryUsage: Int { get }
    /// Bytes the entries use on disk (0 for storage that is not a directory).
    var diskUsage: Int { get }

    /// The content of entry `name` for `key` (memory first), or nil; an invalid entry is discarded.
    func read(_ name: String, key: String, url: URL) -> HTTPCacheContent?
    /// Writes `entry` as `name`; `wait: false` queues the write (served from memory until it lands).
    func write(_ entry: HTTPCacheEntryFile, as name: String, url: URL, wait: Bool)
    func remove(_ names: [String], wait: Bool)
    func removeAll()
    /// Returns once every queued write and removal has landed.
    func waitForQueuedWork()
    func trim(now: Date)
    /// Fleet-wide single-flight for misses and revalidations (shared storage), or nil.
    var flights: HTTPCacheFlights? { get }
}

extension HTTPCacheStore: HTTPCacheStorage {
    var isShared: Bool { false }
    var maximumBodySize: Int { diskCapacity / HTTPImageCache.maximumEntryFraction }
    var flights: HTTPCacheFlights? { nil }
}

import Foundation

/// Where the bytes of an `HTTPImageCache`'s entries live, under its one cache layer (`HTTPCacheLayer`): a
/// directory (`HTTPCacheDirectoryStore`) or Redis (`RedisByteStore`). Values are named by
/// `HTTPCacheKey.fileName(for:)` / `variantFileName(...)` and are whole encoded `HTTPCacheEntryFile`s; a store
/// neither decodes nor judges them. Everything above the bytes (the memory layer, the write-behind queue,
/// tombstones, warnings, validation, shared-fetch coordination) is the layer's.
///
/// Calls may block (a disk, a server): the layer makes them from its own queue or from a download's thread,
/// never from the session's delegate queue.
protocol HTTPCacheByteStore: AnyObject, Sendable {
    /// The value stored as `name`. With `version`, `.unchanged` when `name` still holds that value (a read
    /// that costs no body: a `stat`, a header); a value longer than `maximumLength` reads as absent.
    func get(_ name: String, maximumLength: Int, unlessVersion version: HTTPCacheValueVersion?) -> HTTPCacheByteRead
    /// Stores `value` as `name`, replacing the older value whole (readers see the old or the new one), kept
    /// for `timeToLive` seconds (nil: until deleted or evicted by the store); returns the new value's version.
    func set(_ name: String, _ value: Data, timeToLive: TimeInterval?) throws(HTTPCacheByteStoreError) -> HTTPCacheValueVersion
    /// Deletes the values of `names` (absent ones are no error).
    func delete(_ names: [String])
    /// Deletes `name` unless another writer replaced it since it was read as `version`.
    func delete(_ name: String, ifVersion version: HTTPCacheValueVersion)
    /// Deletes every value this store holds (and nothing else it may share a place with).
    func deleteAll()
}

/// What a `get` found.
enum HTTPCacheByteRead {
    case value(Data, HTTPCacheValueVersion)
    /// The store still holds the value of the version the read named.
    case unchanged
    case absent
    /// The store cannot answer now (a server down or refusing): a value remembered from it may be used as it is.
    case unavailable
}

/// Why a `set` stored nothing.
enum HTTPCacheByteStoreError: Error, Equatable {
    /// The store refused the write (a full or read-only disk or server); the text is the warning to show once,
    /// `metadata` its facts for the log hook (`directory` or `redis.endpoint`, and `error`).
    case refused(warning: String, metadata: [String: String])
    /// The store is unavailable; it reports that itself (a server's outage warning).
    case unavailable
}

/// A store's fingerprint of one stored value, which changes when the value is replaced: a file's device, inode
/// and size; a Redis value's 56-byte header (its dates and both checksums). Opaque to the layer.
struct HTTPCacheValueVersion: Equatable, Sendable {
    let first: UInt64
    let second: UInt64
    let third: UInt64
    let bytes: Data

    init(_ first: UInt64, _ second: UInt64, _ third: UInt64) {
        (self.first, self.second, self.third, self.bytes) = (first, second, third, Data())
    }

    init(bytes: Data) {
        (self.first, self.second, self.third, self.bytes) = (0, 0, 0, bytes)
    }
}

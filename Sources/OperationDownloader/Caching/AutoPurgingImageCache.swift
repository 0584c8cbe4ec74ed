import Foundation
import Decoding

/// An in-memory image cache that purges least-recently-used images when it grows past its capacity
/// (AFNetworking's `AFAutoPurgingImageCache`).
///
/// Cost is `DecodedImage.memoryCost` when the image is added: the poster (or every preloaded frame) and, for an
/// animation composited on demand, its compressed bytes and index (playing it later adds at most one kept
/// canvas and three cached frames, never every frame). When an insertion takes usage
/// above `memoryCapacity`, the least recently accessed images are removed until usage is at most
/// `preferredMemoryUsageAfterPurge`. Every access, reads included (they refresh the access order), happens
/// under one lock, which avoids AFNetworking's LRU races between concurrent reads and purges.
///
/// Pixel bytes alone do not bound a crawler's cache: a 1×1 image costs 4 bytes but its entry about 500 more
/// (key, bookkeeping, the image value). `countLimit` (SDWebImage's `maxMemoryCount`) caps the number of images
/// too; past it, the least recently used go until a quarter of the limit is free.
public final class AutoPurgingImageCache: ImageRequestCache, @unchecked Sendable {  // `lock` guards `entries`, `usage`, `clock`
    private struct Entry {
        var image: DecodedImage
        var cost: UInt64
        var lastAccess: UInt64
    }

    /// Bytes of pixels above which a purge happens.
    public let memoryCapacity: UInt64
    /// Bytes of pixels a purge goes down to.
    public let preferredMemoryUsageAfterPurge: UInt64

    /// Images above which a purge happens, whatever their bytes.
    public let countLimit: Int

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var usage: UInt64 = 0
    /// A counter rather than a date: strictly increasing, so the access order has no ties.
    private var clock: UInt64 = 0

    /// `preferredMemoryUsageAfterPurge` is clamped to `memoryCapacity`; `countLimit` to at least 1.
    public init(
        memoryCapacity: UInt64 = 100 * 1024 * 1024, preferredMemoryUsageAfterPurge: UInt64 = 60 * 1024 * 1024,
        countLimit: Int = 50_000
    ) {
        self.memoryCapacity = memoryCapacity
        self.preferredMemoryUsageAfterPurge = min(preferredMemoryUsageAfterPurge, memoryCapacity)
        self.countLimit = max(1, countLimit)
    }

    /// Bytes of pixels currently held.
    public var memoryUsage: UInt64 { lock.withLock { usage } }

    /// How many images are held.
    public var count: Int { lock.withLock { entries.count } }

    public func add(_ image: DecodedImage, withIdentifier identifier: String) {
        let cost = UInt64(max(0, image.memoryCost))
        lock.withLock {
            clock &+= 1
            if let old = entries[identifier] { usage -= old.cost }
            entries[identifier] = Entry(image: image, cost: cost, lastAccess: clock)
            usage += cost
            if usage > memoryCapacity || entries.count > countLimit { purge() }
        }
    }

    /// Evicts, least recently used first, the images that adding an image of `cost` bytes would evict: when
    /// usage plus `cost` is above `memoryCapacity`, until usage plus `cost` is at most
    /// `preferredMemoryUsageAfterPurge` (or nothing is left). The downloader calls it when a decode starts, so
    /// the decode's bitmap and the cached images stay within the capacity together. For an image under an
    /// identifier the cache does not hold (what a download adds), the images that remain after the add are the
    /// same as without this call, unless the image alone is above the preferred size (then it is kept, where an
    /// add alone would purge it too).
    public func makeRoom(forCost cost: UInt64) {
        lock.withLock {
            let (needed, overflow) = usage.addingReportingOverflow(cost)
            guard overflow || needed > memoryCapacity else { return }
            let target = preferredMemoryUsageAfterPurge > cost ? preferredMemoryUsageAfterPurge - cost : 0
            evictLeastRecentlyUsed(untilUsageAtMost: target, countAtMost: .max)
        }
    }

    /// Under `lock`: drops least recently used images until usage is at most the preferred size and the count
    /// at most three quarters of `countLimit`.
    private func purge() {
        evictLeastRecentlyUsed(untilUsageAtMost: preferredMemoryUsageAfterPurge, countAtMost: countLimit - countLimit / 4)
    }

    /// Under `lock`: drops images, least recently accessed first, until both bounds hold (it sorts every entry:
    /// it must not run on every insertion).
    private func evictLeastRecentlyUsed(untilUsageAtMost bytes: UInt64, countAtMost count: Int) {
        let oldestFirst = entries.sorted { $0.value.lastAccess < $1.value.lastAccess }
        for (identifier, entry) in oldestFirst {
            if usage <= bytes && entries.count <= count { break }
            entries[identifier] = nil
            usage -= entry.cost
        }
    }

    @discardableResult
    public func removeImage(withIdentifier identifier: String) -> Bool {
        lock.withLock {
            guard let entry = entries.removeValue(forKey: identifier) else { return false }
            usage -= entry.cost
            return true
        }
    }

    @discardableResult
    public func removeAllImages() -> Bool {
        lock.withLock {
            let hadImages = !entries.isEmpty
            entries.removeAll()
            usage = 0
            return hadImages
        }
    }

    public func image(withIdentifier identifier: String) -> DecodedImage? {
        lock.withLock {
            guard var entry = entries[identifier] else { return nil }
            clock &+= 1
            entry.lastAccess = clock
            entries[identifier] = entry
            return entry.image
        }
    }
}

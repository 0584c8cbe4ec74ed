import Foundation

/// Why `HTTPImageCache(tiers:)` cannot make a cache of the caches it was given.
public enum HTTPCacheTiersError: Error, Sendable, Equatable {
    /// No cache was given.
    case noTiers
    /// The same cache was given twice (directly, or inside a tiered cache).
    case repeatedTier
}

extension HTTPImageCache {
    /// One cache over several storages, nearest first: a directory on this machine in front of Redis shared by
    /// the fleet (`[HTTPImageCache(directory:), try HTTPImageCache(redis:)]`), with one memory layer in front of
    /// both. See Docs/HTTPCache.md ("Tiers").
    ///
    /// - A lookup is answered by the nearest storage that holds the entry: the memory layer, then each tier. A
    ///   response found further down is copied, byte for byte (its dates and `Age` with it), into the tiers above.
    ///   Freshness is the stored response's wherever it sits: a stale copy nearer does not hide a fresh one
    ///   further down (another process's store or revalidation); with none fresh, the nearest is revalidated.
    /// - A store, a 304's refresh and a removal go to every tier, each keeping what its own rules allow (a body
    ///   over a tier's size limit is not stored in that tier; Redis keys get their TTLs).
    /// - With a shared tier (Redis), the cache is shared: RFC 9111's shared-cache rules apply to every tier
    ///   (a `private` response is stored in none), and misses take the fleet's single-flight through that tier.
    /// - The memory layer has the nearest cache's `memoryCapacity`; `directory`, `diskCapacity` and
    ///   `currentDiskUsage` are the directory tier's. The caches given keep working on their own too (another
    ///   process's view of the same storage); a tiered cache given as a tier adds its tiers.
    /// - Throws: `HTTPCacheTiersError` for an empty list or a cache given twice.
    public convenience init(tiers: [HTTPImageCache]) throws {
        let caches = tiers.flatMap { $0.tierCaches.isEmpty ? [$0] : $0.tierCaches }
        guard let nearest = caches.first else { throw HTTPCacheTiersError.noTiers }
        guard Set(caches.map(ObjectIdentifier.init)).count == caches.count else { throw HTTPCacheTiersError.repeatedTier }
        let layers = caches.map(\.layer)
        let layer = HTTPCacheLayer(
            tiers: layers.flatMap(\.tiers), memoryCapacity: nearest.memoryCapacity, isShared: layers.contains { $0.isShared },
            telemetry: CacheTelemetry(), flights: layers.lazy.compactMap(\.flights).first)
        let local = caches.first { $0.disk != nil }
        self.init(layer: layer, directory: local?.directory, disk: local?.disk, diskCapacity: local?.diskCapacity ?? 0,
                  memoryCapacity: nearest.memoryCapacity, tierCaches: caches)
    }
}

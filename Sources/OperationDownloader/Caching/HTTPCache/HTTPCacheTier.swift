import Foundation

/// One place an `HTTPCacheLayer` keeps entries (a directory, Redis), with the rules that place keeps: which
/// bodies it takes and how long an entry lives there. A tiered cache has several, nearest first.
struct HTTPCacheTier: Sendable {
    /// What the tier is, for warnings and metrics labels: "directory", "redis".
    let storage: String
    let bytes: any HTTPCacheByteStore
    /// Bodies larger than this are not stored in this tier.
    let maximumBodySize: Int
    /// How long entries live in this tier (a TTL with every write); nil: until deleted or trimmed.
    let lifetime: HTTPCacheEntryLifetime?

    /// Values longer than this are not read: nothing this tier stores is longer.
    var maximumValueLength: Int {
        maximumBodySize + HTTPCacheEntryFile.headerSize + HTTPCacheEntryFile.maximumMetadataLength
    }

    /// What a write of `entry` at `now` does in this tier.
    enum Placement: Equatable {
        /// Stored, for this long (nil: no time limit).
        case store(timeToLive: TimeInterval?)
        /// Not stored here (too large, or already unusable): the tier's older value of the name is deleted.
        case delete
    }

    func placement(of entry: HTTPCacheEntryFile, now: Date) -> Placement {
        guard entry.body.count <= maximumBodySize else { return .delete }
        guard let lifetime else { return .store(timeToLive: nil) }
        let milliseconds = lifetime.milliseconds(for: entry, now: now)
        return milliseconds > 0 ? .store(timeToLive: TimeInterval(milliseconds) / 1000) : .delete
    }
}

/// How long an entry is worth keeping where storage has TTLs (Redis): nothing is kept that can no longer be
/// used. A response lives for what remains of its freshness (shared-cache rules: `s-maxage` counts), plus its
/// `stale-while-revalidate` or `stale-if-error` window (the longer; none with `must-revalidate` or `no-cache`),
/// plus `revalidationGrace` when it has validators (a 304 can then refresh it); at most `maximum`. A variant
/// index lives `maximum` (it is small, and its variants expire by themselves).
struct HTTPCacheEntryLifetime: Sendable, Equatable {
    var maximum: TimeInterval
    var revalidationGrace: TimeInterval

    /// The time to live at `now`, in whole milliseconds; 0: not worth storing (already unusable).
    func milliseconds(for entry: HTTPCacheEntryFile, now: Date) -> Int {
        let seconds = timeToLive(for: entry, now: now)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int((seconds * 1000).rounded(.down))
    }

    func timeToLive(for entry: HTTPCacheEntryFile, now: Date) -> TimeInterval {
        let cap = max(0, maximum)
        guard entry.kind != .variantIndex else { return cap }
        let headers = HTTPSharedCacheRules.freshnessHeaders(entry.headers)
        let lifetime = HTTPFreshness.freshnessLifetime(headers, statusCode: entry.statusCode, responseDate: entry.responseDate)
        let age = HTTPFreshness.currentAge(headers, requestDate: entry.requestDate, responseDate: entry.responseDate, now: now)
        let directives = CacheControlDirectives(headers["Cache-Control"])
        var window: TimeInterval = 0
        if !directives.mustRevalidate && !directives.noCache {
            window = max(directives.staleWhileRevalidate ?? 0, directives.staleIfError ?? 0)
        }
        let grace = HTTPFreshness.validators(headers).isEmpty ? 0 : max(0, revalidationGrace)
        return min(cap, max(0, lifetime - age) + window + grace)
    }
}

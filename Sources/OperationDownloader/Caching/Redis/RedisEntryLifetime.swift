import Foundation

/// How long a Redis key lives: nothing is kept that can no longer be used. A response's key lives for what
/// remains of its freshness (shared-cache rules: `s-maxage` counts), plus its `stale-while-revalidate` or
/// `stale-if-error` window (the longer; none with `must-revalidate` or `no-cache`), plus
/// `revalidationGrace` when it has validators (a 304 can then refresh it); at most `maximumTimeToLive`.
/// A variant index lives `maximumTimeToLive` (it is small, and its variants expire by themselves).
enum RedisEntryLifetime {
    /// The key's time to live at `now`, in milliseconds; 0: not worth storing (already unusable).
    static func milliseconds(for entry: HTTPCacheEntryFile, now: Date, options: RedisCacheOptions) -> Int {
        let seconds = timeToLive(for: entry, now: now, options: options)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int((seconds * 1000).rounded(.down))
    }

    static func timeToLive(for entry: HTTPCacheEntryFile, now: Date, options: RedisCacheOptions) -> TimeInterval {
        let cap = max(0, options.maximumTimeToLive)
        guard entry.kind != .variantIndex else { return cap }
        let headers = HTTPSharedCacheRules.freshnessHeaders(entry.headers)
        let lifetime = HTTPFreshness.freshnessLifetime(headers, statusCode: entry.statusCode, responseDate: entry.responseDate)
        let age = HTTPFreshness.currentAge(headers, requestDate: entry.requestDate, responseDate: entry.responseDate, now: now)
        let directives = CacheControlDirectives(headers["Cache-Control"])
        var window: TimeInterval = 0
        if !directives.mustRevalidate && !directives.noCache {
            window = max(directives.staleWhileRevalidate ?? 0, directives.staleIfError ?? 0)
        }
        let grace = HTTPFreshness.validators(headers).isEmpty ? 0 : max(0, options.revalidationGrace)
        return min(cap, max(0, lifetime - age) + window + grace)
    }
}

import Foundation
import Testing
@testable import OperationDownloader

/// Every Redis key lives exactly as long as its entry can be used: freshness left, plus the stale windows,
/// plus a revalidation grace for entries with validators, capped.
@Suite struct RedisEntryLifetimeTests {
    let t0 = HTTPCacheFixtures.t0

    func entry(_ headers: [String: String], status: Int = 200, receivedAt: Date? = nil) -> HTTPCacheEntryFile {
        let at = receivedAt ?? t0
        return HTTPCacheEntryFile(kind: .response, key: "http://h:80/a.png", statusCode: status,
                                  headers: HTTPHeaderFields(HTTPCacheFixtures.headers(date: at, headers).map { ($0.key, $0.value) }),
                                  varyValues: [:], requestDate: at, responseDate: at, body: Data("x".utf8))
    }

    func ttl(_ entry: HTTPCacheEntryFile, now: Date? = nil, cap: TimeInterval = 7 * 86_400, grace: TimeInterval = 86_400) -> TimeInterval {
        HTTPCacheEntryLifetime(maximum: cap, revalidationGrace: grace).timeToLive(for: entry, now: now ?? t0)
    }

    @Test func freshnessLeftWithoutValidators() {
        #expect(ttl(entry(["Cache-Control": "max-age=600"])) == 600)
        // Ten seconds later, ten seconds less.
        #expect(ttl(entry(["Cache-Control": "max-age=600"]), now: t0.addingTimeInterval(10)) == 590)
        // An Age received counts too.
        #expect(ttl(entry(["Cache-Control": "max-age=600", "Age": "100"])) == 500)
    }

    @Test func staleWindowsAndGraceAreAdded() {
        // The longer of the two windows: both are ways to use the same stale entry.
        #expect(ttl(entry(["Cache-Control": "max-age=60, stale-while-revalidate=30, stale-if-error=300"])) == 360)
        // Validators: a later request can still revalidate it with a 304.
        #expect(ttl(entry(["Cache-Control": "max-age=60", "ETag": "\"v1\""])) == 60 + 86_400)
        #expect(ttl(entry(["Cache-Control": "max-age=60", "Last-Modified": HTTPDate.format(t0.addingTimeInterval(-3600))]), grace: 100) == 160)
        // must-revalidate forbids any stale use: no window.
        #expect(ttl(entry(["Cache-Control": "max-age=60, must-revalidate, stale-if-error=300"])) == 60)
    }

    @Test func cappedAndNeverNegative() {
        #expect(ttl(entry(["Cache-Control": "max-age=31536000", "ETag": "\"v\""])) == 7 * 86_400)
        #expect(ttl(entry(["Cache-Control": "max-age=31536000"]), cap: 3600) == 3600)
        // Long stale, nothing to revalidate with: not worth storing.
        #expect(ttl(entry(["Cache-Control": "max-age=60"]), now: t0.addingTimeInterval(3600)) == 0)
        let lifetime = HTTPCacheEntryLifetime(maximum: 3600, revalidationGrace: RedisCacheOptions().revalidationGrace)
        #expect(lifetime.milliseconds(for: entry(["Cache-Control": "max-age=60"]), now: t0.addingTimeInterval(120)) == 0)
        #expect(lifetime.milliseconds(for: entry(["Cache-Control": "max-age=60"]), now: t0) == 60_000)
    }

    /// The shared cache's freshness: s-maxage wins over max-age (and forbids stale use).
    @Test func sMaxAgeCounts() {
        #expect(ttl(entry(["Cache-Control": "max-age=600, s-maxage=30, stale-while-revalidate=100"])) == 30)
        #expect(ttl(entry(["Cache-Control": "max-age=10, s-maxage=600"])) == 600)
    }

    @Test func variantIndexLivesAsLongAsTheCap() {
        let index = HTTPCacheEntryFile(kind: .variantIndex, key: "k", statusCode: 200, headers: HTTPHeaderFields([("Vary", "accept")]),
                                       varyValues: [:], requestDate: t0, responseDate: t0, body: Data("g".utf8))
        #expect(ttl(index, cap: 1234) == 1234)
    }
}

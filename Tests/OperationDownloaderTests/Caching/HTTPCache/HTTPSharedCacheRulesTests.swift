import Foundation
import Testing
@testable import OperationDownloader

/// RFC 9111's shared-cache rules (HTTPSharedCacheRules.swift), as pure functions.
@Suite struct HTTPSharedCacheRulesTests {
    func fields(_ pairs: [String: String]) -> HTTPHeaderFields {
        HTTPHeaderFields(pairs.map { ($0.key, $0.value) })
    }

    @Test func privateIsNotStored() {
        #expect(HTTPSharedCacheRules.refusal(request: fields([:]), response: fields(["Cache-Control": "private, max-age=60"])) != nil)
        #expect(HTTPSharedCacheRules.refusal(request: fields([:]), response: fields(["Cache-Control": "private=\"Set-Cookie\""])) != nil)
        #expect(HTTPSharedCacheRules.refusal(request: fields([:]), response: fields(["Cache-Control": "public, max-age=60"])) == nil)
        #expect(HTTPSharedCacheRules.refusal(request: fields([:]), response: fields([:])) == nil)
    }

    /// §3.5: a response to an authorized request only with public, s-maxage or must-revalidate.
    @Test(arguments: [("max-age=60", false), ("public, max-age=60", true), ("s-maxage=60", true), ("max-age=60, must-revalidate", true)])
    func authorizationNeedsExplicitPermission(cacheControl: String, storable: Bool) {
        let response = fields(["Cache-Control": cacheControl])
        #expect((HTTPSharedCacheRules.refusal(request: fields(["Authorization": "Basic eDp5"]), response: response) == nil) == storable)
        // Credentials the transport added after a challenge count the same.
        #expect((HTTPSharedCacheRules.refusal(request: fields([:]), response: response, authenticated: true) == nil) == storable)
        #expect(HTTPSharedCacheRules.refusal(request: fields([:]), response: response) == nil)
    }

    @Test func sMaxAgeReplacesMaxAgeAndForbidsStaleUse() {
        let rewritten = HTTPSharedCacheRules.freshnessHeaders(fields(["Cache-Control": "max-age=600, s-maxage=30, stale-while-revalidate=60"]))
        let directives = CacheControlDirectives(rewritten["Cache-Control"])
        #expect(directives.maxAge == 30 && directives.mustRevalidate && directives.staleWhileRevalidate == 60)
        let proxy = CacheControlDirectives(HTTPSharedCacheRules.freshnessHeaders(fields(["Cache-Control": "max-age=60, proxy-revalidate"]))["Cache-Control"])
        #expect(proxy.maxAge == 60 && proxy.mustRevalidate)
        // Nothing shared-specific: unchanged.
        let plain = fields(["Cache-Control": "max-age=60"])
        #expect(HTTPSharedCacheRules.freshnessHeaders(plain) == plain)
        // An invalid s-maxage is ignored.
        #expect(CacheControlDirectives(HTTPSharedCacheRules.freshnessHeaders(fields(["Cache-Control": "max-age=60, s-maxage=x"]))["Cache-Control"]).maxAge == 60)
    }

    /// The same stored response: fresh for a private cache (max-age=600), stale for a shared one (s-maxage=0),
    /// which must then revalidate and may not serve it stale within stale-while-revalidate.
    @Test func sharedRulesChangeWhatAStoredResponseMayDo() async throws {
        let t0 = HTTPCacheFixtures.t0
        let entry = HTTPCacheEntryFile(kind: .response, key: "http://h:80/a.png", statusCode: 200,
                                       headers: fields(HTTPCacheFixtures.headers(["Cache-Control": "max-age=600, s-maxage=0, stale-while-revalidate=60"])),
                                       varyValues: [:], requestDate: t0, responseDate: t0, body: Data("x".utf8))
        var stored = try #require(CachedHTTPResponse(entry: entry, url: HTTPCacheFixtures.url("http://h/a.png"), fileName: "f"))
        #expect(stored.use(for: HTTPHeaderFields(), now: t0.addingTimeInterval(5)) == .fresh)
        stored.appliesSharedRules = true
        #expect(stored.use(for: HTTPHeaderFields(), now: t0.addingTimeInterval(5)) == .validate)
    }
}

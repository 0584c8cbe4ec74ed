import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

@Suite struct HTTPFreshnessTests {
    static let t0 = HTTPCacheFixtures.t0

    struct FreshnessCase: CustomTestStringConvertible, Sendable {
        let name: String
        let headers: [String: String]
        var requestHeaders: [String: String] = [:]
        /// Seconds relative to t0.
        var requestedAt: TimeInterval = 0
        var receivedAt: TimeInterval = 0
        let now: TimeInterval
        let fresh: Bool
        var testDescription: String { name }
    }

    static func date(_ offset: TimeInterval) -> String { HTTPDate.format(t0.addingTimeInterval(offset)) }

    static let freshnessCases: [FreshnessCase] = [
        .init(name: "max-age=60 at 30 s", headers: ["Cache-Control": "max-age=60", "Date": date(0)], now: 30, fresh: true),
        .init(name: "max-age=60 at 61 s", headers: ["Cache-Control": "max-age=60", "Date": date(0)], now: 61, fresh: false),
        .init(name: "max-age=60 at exactly 60 s is stale", headers: ["Cache-Control": "max-age=60"], now: 60, fresh: false),
        .init(name: "Age counts", headers: ["Cache-Control": "max-age=60", "Age": "50", "Date": date(0)], now: 20, fresh: false),
        .init(name: "invalid Age ignored", headers: ["Cache-Control": "max-age=60", "Age": "soon"], now: 20, fresh: true),
        .init(name: "response delay counts", headers: ["Cache-Control": "max-age=15", "Date": date(0)],
              requestedAt: -10, receivedAt: 0, now: 6, fresh: false),
        .init(name: "Date in the past counts (apparent age)", headers: ["Cache-Control": "max-age=60", "Date": date(-100)],
              now: 1, fresh: false),
        .init(name: "no-cache is never fresh", headers: ["Cache-Control": "no-cache, max-age=600"], now: 1, fresh: false),
        .init(name: "qualified no-cache only keeps the listed fields out", headers: ["Cache-Control": "no-cache=\"Set-Cookie\", max-age=600"],
              now: 1, fresh: true),
        .init(name: "Pragma is ignored (RFC 9111 deprecates it)", headers: ["Pragma": "no-cache", "Expires": date(600), "Date": date(0)],
              now: 1, fresh: true),
        .init(name: "request Pragma is ignored", headers: ["Cache-Control": "max-age=600"], requestHeaders: ["Pragma": "no-cache"],
              now: 1, fresh: true),
        .init(name: "Expires in 120 s at 60 s", headers: ["Expires": date(120), "Date": date(0)], now: 60, fresh: true),
        .init(name: "Expires in 120 s at 121 s", headers: ["Expires": date(120), "Date": date(0)], now: 121, fresh: false),
        .init(name: "server clock ahead: Expires counts from Date", headers: ["Expires": date(3720), "Date": date(3600)],
              now: 60, fresh: true),
        .init(name: "server clock behind: apparent age counts", headers: ["Expires": date(-3500), "Date": date(-3600)],
              now: 1, fresh: false),
        .init(name: "invalid Expires means expired", headers: ["Expires": "0", "Date": date(0), "Last-Modified": date(-86400 * 30)],
              now: 1, fresh: false),
        .init(name: "max-age wins over Expires", headers: ["Cache-Control": "max-age=10", "Expires": date(3600), "Date": date(0)],
              now: 20, fresh: false),
        .init(name: "s-maxage ignored (private cache)", headers: ["Cache-Control": "s-maxage=600", "Date": date(0)], now: 1, fresh: false),
        .init(name: "s-maxage ignored beside max-age", headers: ["Cache-Control": "s-maxage=600, max-age=10"], now: 20, fresh: false),
        .init(name: "invalid max-age is stale", headers: ["Cache-Control": "max-age=abc", "Expires": date(3600), "Date": date(0)],
              now: 1, fresh: false),
        .init(name: "duplicate max-age: the largest counts", headers: ["Cache-Control": "max-age=60, max-age=1"], now: 30, fresh: true),
        .init(name: "duplicate max-age: the largest counts (short first)", headers: ["Cache-Control": "max-age=1, max-age=600"],
              now: 30, fresh: true),
        .init(name: "decimal max-age: its whole seconds", headers: ["Cache-Control": "max-age=60.5"], now: 59, fresh: true),
        .init(name: "decimal max-age: not past its whole seconds", headers: ["Cache-Control": "max-age=60.5"], now: 60.2, fresh: false),
        .init(name: "max-age with trailing letters: its digits", headers: ["Cache-Control": "max-age=60a"], now: 30, fresh: true),
        .init(name: "max-age starting with a letter is stale", headers: ["Cache-Control": "max-age=a60"], now: 1, fresh: false),
        .init(name: "heuristic at least 10 s (5 s since modified)", headers: ["Last-Modified": date(-5), "Date": date(0)], now: 9,
              fresh: true),
        .init(name: "heuristic at least 10 s, not more", headers: ["Last-Modified": date(-5), "Date": date(0)], now: 11, fresh: false),
        .init(name: "no heuristic for a Last-Modified after Date", headers: ["Last-Modified": date(5), "Date": date(0)], now: 1,
              fresh: false),
        .init(name: "Age with parameters: its number", headers: ["Cache-Control": "max-age=3600", "Age": "7200;foo=bar"], now: 1,
              fresh: false),
        .init(name: "quoted max-age accepted", headers: ["Cache-Control": "max-age=\"60\""], now: 30, fresh: true),
        .init(name: "heuristic 10% of 1000 s at 90 s", headers: ["Last-Modified": date(-1000), "Date": date(0)], now: 90, fresh: true),
        .init(name: "heuristic 10% of 1000 s at 101 s", headers: ["Last-Modified": date(-1000), "Date": date(0)], now: 101, fresh: false),
        .init(name: "heuristic capped at one day (23 h)", headers: ["Last-Modified": date(-86400 * 100), "Date": date(0)],
              now: 23 * 3600, fresh: true),
        .init(name: "heuristic capped at one day (25 h)", headers: ["Last-Modified": date(-86400 * 100), "Date": date(0)],
              now: 25 * 3600, fresh: false),
        .init(name: "ETag alone gives no freshness", headers: ["ETag": "\"v1\"", "Date": date(0)], now: 1, fresh: false),
        .init(name: "nothing is stale", headers: [:], now: 1, fresh: false),
        .init(name: "request no-cache forces revalidation", headers: ["Cache-Control": "max-age=600"],
              requestHeaders: ["Cache-Control": "no-cache"], now: 1, fresh: false),
        .init(name: "request max-age bounds the age", headers: ["Cache-Control": "max-age=600"],
              requestHeaders: ["Cache-Control": "max-age=10"], now: 20, fresh: false),
        .init(name: "request max-age within the age", headers: ["Cache-Control": "max-age=600"],
              requestHeaders: ["Cache-Control": "max-age=100"], now: 20, fresh: true),
        .init(name: "must-revalidate does not shorten freshness", headers: ["Cache-Control": "max-age=60, must-revalidate"],
              now: 30, fresh: true),
        .init(name: "request min-fresh beyond the remaining lifetime", headers: ["Cache-Control": "max-age=600"],
              requestHeaders: ["Cache-Control": "min-fresh=590"], now: 20, fresh: false),
        .init(name: "request min-fresh within the remaining lifetime", headers: ["Cache-Control": "max-age=600"],
              requestHeaders: ["Cache-Control": "min-fresh=500"], now: 20, fresh: true),
        .init(name: "Age list: the first value counts", headers: ["Cache-Control": "max-age=3600", "Age": "7200, 0"],
              now: 1, fresh: false),
        .init(name: "Age list: 0 first", headers: ["Cache-Control": "max-age=3600", "Age": "0, 7200"], now: 1, fresh: true),
        .init(name: "negative Age ignored", headers: ["Cache-Control": "max-age=3600", "Age": "-7200"], now: 1, fresh: true),
        .init(name: "fractional Age ignored", headers: ["Cache-Control": "max-age=3600", "Age": "7200.0"], now: 1, fresh: true),
        .init(name: "Age 2^31 is stale", headers: ["Cache-Control": "max-age=3600", "Age": "2147483648"], now: 1, fresh: false),
        .init(name: "max-age past 2^31 is fresh", headers: ["Cache-Control": "max-age=99999999999"], now: 86_400 * 365, fresh: true),
        .init(name: "invalid Date: Expires counts from arrival", headers: ["Date": "foo", "Expires": date(10)], now: 5, fresh: true),
    ]

    @Test(arguments: freshnessCases)
    func freshness(_ c: FreshnessCase) {
        let headers = HTTPHeaderFields(c.headers.map { ($0.key, $0.value) })
        let request = HTTPHeaderFields(c.requestHeaders.map { ($0.key, $0.value) })
        let use = HTTPFreshness.use(headers, statusCode: 200, requestDate: Self.t0.addingTimeInterval(c.requestedAt),
                                    responseDate: Self.t0.addingTimeInterval(c.receivedAt), request: request,
                                    now: Self.t0.addingTimeInterval(c.now))
        #expect((use == .fresh) == c.fresh)
    }

    @Test func lifetimeAndAgeValues() {
        let h = HTTPHeaderFields([("Last-Modified", Self.date(-1000)), ("Date", Self.date(0))])
        #expect(HTTPFreshness.freshnessLifetime(h, statusCode: 200, responseDate: Self.t0) == 100)
        let aged = HTTPHeaderFields([("Age", "30"), ("Date", Self.date(0))])
        // corrected initial age = max(apparent 0, 30 + 5 delay) = 35, plus 10 s resident.
        #expect(HTTPFreshness.currentAge(aged, requestDate: Self.t0.addingTimeInterval(-5), responseDate: Self.t0,
                                         now: Self.t0.addingTimeInterval(10)) == 45)
    }

    struct StorabilityCase: CustomTestStringConvertible, Sendable {
        let name: String
        var method = "GET"
        var status = 200
        let headers: [String: String]
        var requestHeaders: [String: String] = [:]
        /// A POST's Content-Location names its own URL.
        var contentLocationIsTarget = false
        /// nil: not storable.
        let varyFields: [String]?
        var testDescription: String { name }
    }

    static let storabilityCases: [StorabilityCase] = [
        .init(name: "plain 200", headers: ["Cache-Control": "max-age=60"], varyFields: []),
        .init(name: "200 without freshness is stored (for returnCacheDataElseLoad)", headers: [:], varyFields: []),
        .init(name: "no-store", headers: ["Cache-Control": "max-age=60, no-store"], varyFields: nil),
        .init(name: "request no-store", headers: ["Cache-Control": "max-age=60"], requestHeaders: ["Cache-Control": "no-store"],
              varyFields: nil),
        .init(name: "POST without Content-Location", method: "POST", headers: ["Cache-Control": "max-age=60"], varyFields: nil),
        .init(name: "POST naming its URL, with max-age", method: "POST", headers: ["Cache-Control": "max-age=60"],
              contentLocationIsTarget: true, varyFields: []),
        .init(name: "POST naming its URL, with Expires", method: "POST", headers: ["Expires": date(60)],
              contentLocationIsTarget: true, varyFields: []),
        .init(name: "POST naming its URL, heuristics only", method: "POST", headers: ["Last-Modified": date(-86_400)],
              contentLocationIsTarget: true, varyFields: nil),
        .init(name: "PUT", method: "PUT", headers: ["Cache-Control": "max-age=60"], contentLocationIsTarget: true, varyFields: nil),
        .init(name: "206 without Content-Range", status: 206, headers: ["Cache-Control": "max-age=60"], varyFields: nil),
        .init(name: "206 with one range", status: 206, headers: ["Cache-Control": "max-age=60", "Content-Range": "bytes 0-4/10"],
              varyFields: []),
        .init(name: "206 heuristically cacheable", status: 206,
              headers: ["Last-Modified": date(-86_400), "Content-Range": "bytes 0-4/*"], varyFields: []),
        .init(name: "206 of several ranges (multipart)", status: 206,
              headers: ["Cache-Control": "max-age=60", "Content-Type": "multipart/byteranges; boundary=x"], varyFields: nil),
        .init(name: "404 with max-age", status: 404, headers: ["Cache-Control": "max-age=60"], varyFields: []),
        .init(name: "404 heuristically cacheable", status: 404, headers: [:], varyFields: []),
        .init(name: "500 with max-age", status: 500, headers: ["Cache-Control": "max-age=60"], varyFields: []),
        .init(name: "500 without explicit freshness", status: 500, headers: ["Last-Modified": date(-86_400)], varyFields: nil),
        .init(name: "201 without explicit freshness", status: 201, headers: ["Last-Modified": date(-86_400)], varyFields: nil),
        .init(name: "599 with public", status: 599, headers: ["Cache-Control": "public"], varyFields: []),
        .init(name: "304 never", status: 304, headers: ["Cache-Control": "max-age=60"], varyFields: nil),
        .init(name: "must-understand lets a known status past no-store",
              headers: ["Cache-Control": "max-age=60, no-store, must-understand"], varyFields: []),
        .init(name: "must-understand keeps an unknown status out", status: 599,
              headers: ["Cache-Control": "max-age=60, no-store, must-understand"], varyFields: nil),
        .init(name: "Vary: Accept", headers: ["Vary": "Accept"], varyFields: ["accept"]),
        .init(name: "Vary: accept-encoding, Accept", headers: ["Vary": "accept-encoding, Accept"],
              varyFields: ["accept", "accept-encoding"]),
        .init(name: "Vary: *", headers: ["Vary": "*"], varyFields: nil),
        .init(name: "Vary: Foo, *", headers: ["Vary": "Foo, *"], varyFields: nil),
        .init(name: "Vary: User-Agent", headers: ["Vary": "User-Agent"], varyFields: ["user-agent"]),
        .init(name: "Vary: Accept, Cookie", headers: ["Vary": "Accept, Cookie"], varyFields: ["accept", "cookie"]),
    ]

    @Test(arguments: storabilityCases)
    func storability(_ c: StorabilityCase) {
        let result = HTTPFreshness.storability(method: c.method, statusCode: c.status,
                                               responseHeaders: HTTPHeaderFields(c.headers.map { ($0.key, $0.value) }),
                                               requestHeaders: HTTPHeaderFields(c.requestHeaders.map { ($0.key, $0.value) }),
                                               contentLocationIsTarget: c.contentLocationIsTarget)
        if let fields = c.varyFields {
            #expect(result == .storable(varyFields: fields))
        } else if case .storable = result {
            Issue.record("\(c.name) should not be storable")
        }
    }

    @Test func varyValuesAreNormalised() {
        let request = HTTPHeaderFields([("Accept", "image/webp, Image/*; Q=0.8"), ("Foo", " 1, 2 "), ("Accept-Language", "en, De")])
        let values = HTTPImageCache.varyValues(["accept", "accept-encoding", "accept-language", "foo"], request: request)
        #expect(values == ["accept": "image/webp,image/*;q=0.8", "accept-language": "de,en", "foo": "1,2"])
        // Absent stays absent.
        #expect(HTTPVary.normalisedValue(nil, field: "foo") == nil)
        #expect(HTTPVary.normalisedValue("1,2", field: "foo") == HTTPVary.normalisedValue("1, 2", field: "foo"))
    }

    @Test func validators() {
        let both = HTTPHeaderFields([("ETag", "\"abc\""), ("Last-Modified", "Tue, 14 Nov 2023 22:13:20 GMT")])
        #expect(HTTPFreshness.validators(both) == ["If-None-Match": "\"abc\"", "If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT"])
        #expect(HTTPFreshness.validators(HTTPHeaderFields([("Cache-Control", "max-age=1")])).isEmpty)
        #expect(HTTPFreshness.validators(HTTPHeaderFields([("Last-Modified", "yesterday")])).isEmpty)
    }

    @Test func notModifiedUpdatesHeadersButNotBodyFields() {
        let stored = HTTPHeaderFields([("Cache-Control", "max-age=10"), ("Content-Length", "100"), ("ETag", "\"a\""),
                                       ("Content-Type", "image/png"), ("Age", "30"), ("Date", Self.date(-100))])
        let notModified = HTTPHeaderFields([("Cache-Control", "max-age=600"), ("Content-Length", "0"), ("Set-Cookie", "x=1"),
                                            ("Content-Type", "image/webp"), ("Content-Encoding", "gzip"), ("X-New", "1"),
                                            ("Connection", "x-hop"), ("X-Hop", "1"), ("Proxy-Authenticate", "Basic")])
        let updated = HTTPCacheHeaderRules.updatedHeaders(stored: stored, notModified: notModified, responseDate: Self.t0)
        #expect(updated["Cache-Control"] == "max-age=600")
        #expect(updated["Content-Length"] == "100")
        #expect(updated["Content-Type"] == "image/webp")
        #expect(updated["Content-Encoding"] == nil)
        #expect(updated["Set-Cookie"] == "x=1")
        #expect(updated["X-New"] == "1")
        #expect(updated["X-Hop"] == nil && updated["Connection"] == nil && updated["Proxy-Authenticate"] == nil)
        // The refreshed response's age starts from the 304: its Date (or arrival), no stale Age.
        #expect(updated["Date"] == Self.date(0))
        #expect(updated["Age"] == nil)
    }

    @Test func notModifiedMatching() {
        let stored = HTTPHeaderFields([("ETag", "\"a\""), ("Last-Modified", Self.date(-10))])
        #expect(HTTPFreshness.notModifiedMatches(stored: stored, notModified: HTTPHeaderFields([("ETag", "W/\"a\"")])))
        #expect(HTTPFreshness.notModifiedMatches(stored: stored, notModified: HTTPHeaderFields([("ETag", "\"a\"")])))
        #expect(!HTTPFreshness.notModifiedMatches(stored: stored, notModified: HTTPHeaderFields([("ETag", "\"b\"")])))
        #expect(HTTPFreshness.notModifiedMatches(stored: stored, notModified: HTTPHeaderFields()))
        #expect(HTTPFreshness.notModifiedMatches(stored: stored, notModified: HTTPHeaderFields([("Last-Modified", Self.date(-10))])))
        #expect(!HTTPFreshness.notModifiedMatches(stored: stored, notModified: HTTPHeaderFields([("Last-Modified", Self.date(-5))])))
        // A strong 304 never matches a weak stored tag; an ETag in the 304 with none stored names something else.
        let weak = HTTPHeaderFields([("ETag", "W/\"a\"")])
        #expect(!HTTPFreshness.notModifiedMatches(stored: weak, notModified: HTTPHeaderFields([("ETag", "\"a\"")])))
        #expect(!HTTPFreshness.notModifiedMatches(stored: HTTPHeaderFields(), notModified: HTTPHeaderFields([("ETag", "\"a\"")])))
    }

    @Test func storedFieldsDropHopByHopConnectionListedAndProxyFields() {
        let received = HTTPHeaderFields([("Connection", "a, B"), ("A", "1"), ("b", "2"), ("C", "3"), ("Keep-Alive", "x"),
                                         ("Proxy-Authenticate", "Basic"), ("Proxy-Authentication-Info", "x"),
                                         ("Proxy-Authorization", "x"), ("Proxy-Connection", "x"), ("TE", "x"),
                                         ("Transfer-Encoding", "chunked"), ("Upgrade", "h2c"), ("Set-Cookie", "s=1"),
                                         ("Content-Encoding", "gzip"), ("Content-Length", "700"),
                                         ("Cache-Control", "no-cache=\"X-Secret\", max-age=60"), ("X-Secret", "1")])
        let stored = HTTPCacheHeaderRules.fieldsForStorage(received, bodyLength: 1000, responseDate: Self.t0)
        #expect(Set(stored.fields.map { $0.name.lowercased() })
                == ["c", "set-cookie", "content-length", "cache-control", "date"])
        #expect(stored["Content-Length"] == "1000")
        #expect(stored["Date"] == Self.date(0))  // added when missing
        // A coding the transport did not undo stays; a response stored without body keeps its length.
        let identity = HTTPCacheHeaderRules.fieldsForStorage(HTTPHeaderFields([("Content-Encoding", "identity"), ("Content-Length", "5")]),
                                                             bodyLength: nil, responseDate: Self.t0)
        #expect(identity["Content-Encoding"] == "identity" && identity["Content-Length"] == "5")
    }

    @Test func httpDates() throws {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(HTTPCacheFixtures.t0) == "Tue, 14 Nov 2023 22:13:20 GMT")
        for bad in ["", "0", "-1", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 08:49:37 PST", String(repeating: "9", count: 10_000)] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad.prefix(40))")
        }
        // Round trip over a range of instants, including leap days and far dates.
        for seconds in stride(from: -2_000_000_000, through: 4_000_000_000, by: 86_399 * 37) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }

    @Test func cacheControlParsing() {
        let d = CacheControlDirectives("Max-Age=60 , MUST-REVALIDATE, private=\"a, b\", no-store")
        #expect(d.maxAge == 60)
        #expect(d.mustRevalidate)
        #expect(d.noStore)
        #expect(!d.noCache)
        #expect(CacheControlDirectives("max-age=99999999999999999999").maxAge == 2_147_483_648)
        #expect(CacheControlDirectives("max-age=-1").maxAgeInvalid)
        #expect(CacheControlDirectives(nil) == CacheControlDirectives())
        #expect(CacheControlDirectives("max-age=60, max-age=1").maxAge == 60)
        #expect(CacheControlDirectives("max-age=1, max-age=60").maxAge == 60)
    }

    struct PolicyCase: CustomTestStringConvertible, Sendable {
        let policy: URLRequest.CachePolicy
        let useURLCache: Bool
        let readMode: HTTPCacheRequestPolicy.ReadMode
        let stores: Bool
        var testDescription: String { "\(policy.rawValue) useURLCache=\(useURLCache)" }
    }

    static let policyCases: [PolicyCase] = [
        .init(policy: .useProtocolCachePolicy, useURLCache: false, readMode: .none, stores: false),
        .init(policy: .returnCacheDataDontLoad, useURLCache: false, readMode: .none, stores: false),
        .init(policy: .useProtocolCachePolicy, useURLCache: true, readMode: .protocolRules, stores: true),
        .init(policy: .reloadIgnoringLocalCacheData, useURLCache: true, readMode: .none, stores: true),
        .init(policy: .reloadIgnoringLocalAndRemoteCacheData, useURLCache: true, readMode: .none, stores: true),
        .init(policy: .returnCacheDataElseLoad, useURLCache: true, readMode: .anyStoredElseLoad, stores: true),
        .init(policy: .returnCacheDataDontLoad, useURLCache: true, readMode: .anyStoredDontLoad, stores: false),
        .init(policy: .reloadRevalidatingCacheData, useURLCache: true, readMode: .alwaysRevalidate, stores: true),
    ]

    @Test(arguments: policyCases)
    func requestPolicy(_ c: PolicyCase) {
        let resolved = HTTPCacheRequestPolicy.resolve(cachePolicy: c.policy, useURLCache: c.useURLCache)
        #expect(resolved.readMode == c.readMode)
        #expect(resolved.storesResponses == c.stores)
    }
}

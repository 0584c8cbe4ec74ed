import Foundation
import Testing
@testable import OperationDownloader

/// The header parsers of the HTTP cache, one rule per test (RFC 9110 §5.6, §5.6.7, §8.8.3, §12.5.5; RFC 9111
/// §1.2.2, §5.1, §5.2).
@Suite struct HTTPHeaderParsingTests {
    // MARK: HTTP-date (RFC 9110 §5.6.7)

    static let sunday = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test func theThreeFormatsParse() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Self.sunday)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: HTTPCacheFixtures.t0) == Self.sunday)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Self.sunday)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == Self.sunday.addingTimeInterval(10 * 86_400))
    }

    @Test func namesAndGMTIgnoreCase() {
        #expect(HTTPDate.parse("SUN, 06 NOV 1994 08:49:37 gmt") == Self.sunday)
        #expect(HTTPDate.parse("sunday, 06-nov-94 08:49:37 GMT", now: HTTPCacheFixtures.t0) == Self.sunday)
    }

    /// RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is in the previous century.
    @Test func rfc850TwoDigitYearsAreWithinFiftyYears() throws {
        let now = try #require(HTTPDate.parse("Sun, 01 Jan 2026 00:00:00 GMT"))
        #expect(HTTPDate.parse("Thursday, 18-Aug-50 02:01:18 GMT", now: now) == HTTPDate.parse("Thu, 18 Aug 2050 02:01:18 GMT"))
        #expect(HTTPDate.parse("Sunday, 18-Aug-77 02:01:18 GMT", now: now) == HTTPDate.parse("Thu, 18 Aug 1977 02:01:18 GMT"))
    }

    /// Anything but the exact grammar is not a date (for Expires: already expired).
    @Test(arguments: [
        "Thu, 18  Aug  2050 02:01:18 GMT",  // doubled spaces
        "Thu, 18-Aug-2050 02:01:18 GMT",    // dashes in an IMF-fixdate
        "Thursday, 18-Aug-2050 02:01:18 GMT",  // RFC 850 with a four-digit year
        "Thu, 18 Aug 2050 2:01:18 GMT",     // one-digit hour
        "Thu, 18 Aug 2050 02.01.18 GMT",    // periods
        "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 2050 02:01:18 AEST",
        "Thu, 18 Aug 50 02:01:18 GMT",      // two-digit year in an IMF-fixdate
        "Thu 18 Aug 2050 02:01:18 GMT",     // no comma
        "Thu, 18 Aug 2050 2:01:18 GMT, Thu, 18 Aug 2050 2:01:19 GMT",  // two lines joined
        "Thu Aug 8 02:01:18 2050",          // asctime with one space before a one-digit day
        "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 29 Feb 1995 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Foo, 06 Nov 1994 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT",
        "", "0", "-1", "yesterday",
    ])
    func invalidDatesAreRejected(_ value: String) {
        #expect(HTTPDate.parse(value) == nil)
    }

    /// Found by the http-date fuzzer: a leap second that rolls into year 500's March formatted as "500".
    @Test func formattedYearsHaveFourDigits() throws {
        let rolled = try #require(HTTPDate.parse("Tue, 28 Feb 0500 23:59:60 GMT"))
        #expect(HTTPDate.format(rolled) == "Mon, 01 Mar 0500 00:00:00 GMT")
        #expect(HTTPDate.parse(HTTPDate.format(rolled)) == rolled)
    }

    @Test func leapDaysAndFarDatesRoundTrip() {
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT") != nil)
        #expect(HTTPDate.parse("Sat, 20 Nov 2286 17:46:39 GMT") == Date(timeIntervalSince1970: 9_999_999_999))
        for seconds in stride(from: -2_000_000_000, through: 4_000_000_000, by: 86_399 * 37) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }

    // MARK: Age (RFC 9111 §5.1)

    @Test func ageListUsesTheFirstValue() {
        #expect(HTTPAge.parse("7200, 0") == 7200)
        #expect(HTTPAge.parse("0, 7200") == 0)
        #expect(HTTPAge.parse(" 30 ") == 30)
    }

    @Test func invalidAgeIsIgnored() {
        for value in ["abc", "-7200", "7200.0", "", "1 2", "+5", ";foo=bar", "7200a;x"] {
            #expect(HTTPAge.parse(value) == nil, "\(value)")
        }
        #expect(HTTPAge.parse(nil) == nil)
        // Parameters (structured-field style) after the number do not hide it.
        #expect(HTTPAge.parse("7200;foo=bar") == 7200)
        #expect(HTTPAge.parse("7200 ; foo=111") == 7200)
    }

    @Test func deltaSecondsPast2To31CountAs2To31() {
        #expect(HTTPAge.parse("2147483647") == 2_147_483_647)
        #expect(HTTPAge.parse("2147483649") == 2_147_483_648)
        #expect(HTTPAge.parse(String(repeating: "9", count: 400)) == 2_147_483_648)
        #expect(HTTPFieldList.deltaSeconds("003600") == 3600)
    }

    // MARK: Cache-Control (RFC 9111 §5.2)

    @Test func directiveNamesIgnoreCaseAndWhitespaceAroundCommas() {
        let d = CacheControlDirectives("Max-Age=60 ,\tMUST-REVALIDATE , No-Store,,")
        #expect(d.maxAge == 60 && d.mustRevalidate && d.noStore)
    }

    @Test func duplicateDirectivesCountOnceFirstFirstButMaxAgeTakesTheLargest() {
        #expect(CacheControlDirectives("max-age=1800, max-age=1").maxAge == 1800)
        #expect(CacheControlDirectives("max-age=1, max-age=1800").maxAge == 1800)
        // Several lines arrive joined: the same rule; an invalid value beside a valid one does not count.
        let mixed = CacheControlDirectives("max-age=abc, max-age=60")
        #expect(mixed.maxAge == 60 && !mixed.maxAgeInvalid)
        #expect(CacheControlDirectives("stale-if-error=5, stale-if-error=500").staleIfError == 5)
    }

    @Test(arguments: [("max-age=3600.0", 3600.0), ("max-age=3600.5", 3600), ("max-age=3600a", 3600), ("max-age=\"60.9\"", 60),
                      ("max-age=007", 7)])
    func maxAgeIsReadByItsLeadingDigits(_ value: String, _ seconds: Double) {
        let d = CacheControlDirectives(value)
        #expect(d.maxAge == seconds && !d.maxAgeInvalid)
    }

    @Test func quotedArgumentsAreAcceptedAndCommasInsideThemDoNotSplit() {
        #expect(CacheControlDirectives("max-age=\"3600\"").maxAge == 3600)
        let d = CacheControlDirectives("extension=\"max-age=3600, no-store\", max-age=1")
        #expect(d.maxAge == 1 && !d.noStore)
        #expect(CacheControlDirectives("x=\"a\\\"b, max-age=5\", max-age=7").maxAge == 7)
    }

    @Test(arguments: ["max-age=-1", "max-age=a3600", "max-age='3600'", "max-age= 3600", "max-age", "max-age=\"\"", "max-age=.5"])
    func invalidMaxAgeMakesTheResponseStale(_ value: String) {
        let d = CacheControlDirectives(value)
        #expect(d.maxAgeInvalid && d.maxAge == nil)
        let lifetime = HTTPFreshness.freshnessLifetime(HTTPHeaderFields([("Cache-Control", value), ("Expires", "Sun, 21 Nov 2286 04:46:39 GMT")]),
                                                       statusCode: 200, responseDate: HTTPCacheFixtures.t0)
        #expect(lifetime == 0)
    }

    @Test func aMemberWithWhitespaceBeforeEqualsIsIgnored() {
        let d = CacheControlDirectives("max-age =3600")
        #expect(d.maxAge == nil && !d.maxAgeInvalid)
    }

    @Test func hugeMaxAgeIsCapped() {
        #expect(CacheControlDirectives("max-age=99999999999").maxAge == 2_147_483_648)
    }

    @Test func qualifiedNoCacheNamesFields() {
        let d = CacheControlDirectives("no-cache=\"A, Set-Cookie\", max-age=60")
        #expect(!d.noCache && d.noCacheFields == ["a", "set-cookie"])
        #expect(CacheControlDirectives("no-cache=\"\"").noCache)
        #expect(CacheControlDirectives("no-cache").noCache)
    }

    @Test func staleExtensionsAndRequestDirectives() {
        let response = CacheControlDirectives("max-age=1, stale-while-revalidate=30, stale-if-error=60, immutable, must-understand")
        #expect(response.staleWhileRevalidate == 30 && response.staleIfError == 60 && response.immutable && response.mustUnderstand)
        let request = CacheControlDirectives("max-stale, min-fresh=5, only-if-cached, no-cache")
        #expect(request.maxStale == .any && request.minFresh == 5 && request.onlyIfCached && request.noCache)
        #expect(CacheControlDirectives("max-stale=100").maxStale == .seconds(100))
        #expect(CacheControlDirectives("max-stale=x").maxStale == nil)
    }

    // MARK: Vary (RFC 9110 §12.5.5)

    @Test func varyNamesAreCollectedLowerCasedOnce() {
        #expect(HTTPVary("Accept, accept-encoding, ACCEPT") == .fields(["accept", "accept-encoding"]))
        #expect(HTTPVary(nil) == .none)
        #expect(HTTPVary("") == .none)
        #expect(HTTPVary(", ,") == .none)
    }

    @Test(arguments: ["*", "*, *", ", *", "*, Foo", "Foo, *", "Foo Bar", "Foo, \"x\""])
    func varyStarOrAMalformedMemberNeverMatches(_ value: String) {
        #expect(HTTPVary(value) == .any)
    }

    // MARK: Entity tags (RFC 9110 §8.8.3)

    @Test func entityTagsParseWithQuotesAndWeakness() throws {
        let strong = try #require(HTTPEntityTag("\"abc\""))
        let weak = try #require(HTTPEntityTag("W/\"abc\""))
        #expect(!strong.isWeak && weak.isWeak && strong.opaqueTag == "\"abc\"")
        #expect(weak.weakMatches(strong) && !weak.strongMatches(strong) && strong.strongMatches(strong))
        for bad in ["abc", "w/\"abc\"", "W\"abc\"", "\"a\"b\"", "\"abc", "W/", "\"a b\""] {
            #expect(HTTPEntityTag(bad) == nil, "\(bad)")
        }
    }

    @Test func entityTagListsReadBareTagsQuotedAndSkipMalformedMembers() {
        #expect(HTTPEntityTag.list("\"a\", W/\"b\", c, \"d\"")?.map(\.opaqueTag) == ["\"a\"", "\"b\"", "\"c\"", "\"d\""])
        #expect(HTTPEntityTag.list("\"a\", \"x, W/y")?.map(\.opaqueTag) == ["\"a\""])
        #expect(HTTPEntityTag.quotingBareTags("abc") == "\"abc\"")
        #expect(HTTPEntityTag.quotingBareTags("W/\"a\", b, *") == "W/\"a\", \"b\", *")
        #expect(HTTPEntityTag.quotingBareTags("\"a\", W/\"b\"") == "\"a\", W/\"b\"")
        #expect(HTTPEntityTag.list("*") == nil)
        #expect(HTTPEntityTag.list("\"a,b\", \"c\"")?.count == 2)
    }

    // MARK: Media types (RFC 9110 §8.3.1)

    @Test func mediaTypesHaveACanonicalForm() throws {
        let type = try #require(HTTPMediaType("Image/PNG ; Charset=\"x y\";q=0.8"))
        #expect(type.type == "image" && type.subtype == "png")
        #expect(type.canonical == "image/png;charset=\"x y\";q=0.8")
        #expect(HTTPMediaType("image/*") != nil)
        for bad in ["image", "/png", "image/", "image/png; charset", "image/png; =x", "ima ge/png", "image/png; a=\"b"] {
            #expect(HTTPMediaType(bad) == nil, "\(bad)")
        }
    }

    // MARK: Bounded work

    /// Header values far past real sizes are cut, never scanned whole: a list of 100 000 members reads 128.
    @Test func listsAreBounded() {
        let long = Array(repeating: "a", count: 100_000).joined(separator: ",")
        #expect(HTTPFieldList.elements(long).count == HTTPFieldList.maximumElements)
        let unterminated = "\"" + String(repeating: "x", count: 100_000)
        #expect(HTTPFieldList.elements(unterminated).isEmpty)
        #expect(CacheControlDirectives(String(repeating: "max-age=1,", count: 50_000)).maxAge == 1)
    }
}

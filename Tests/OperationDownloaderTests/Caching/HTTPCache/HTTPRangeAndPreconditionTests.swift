import Foundation
import Testing
@testable import OperationDownloader

/// The pure pieces behind answering Range and conditional requests from storage: `Range` and
/// `Content-Range` parsing (RFC 9110 §14), and the preconditions a cache evaluates (RFC 9110 §13,
/// RFC 9111 §4.3.2).
@Suite struct HTTPRangeAndPreconditionTests {
    typealias F = HTTPCacheFixtures

    // MARK: Range

    @Test(arguments: [
        ("bytes=0-1", HTTPByteRange.from(0, through: 1)), ("bytes=1-", .from(1, through: nil)), ("bytes=-1", .suffix(1)),
        ("Bytes = 5-5", .from(5, through: 5)), ("bytes=0-999999999999", .from(0, through: 999_999_999_999)),
    ])
    func singleByteRangesParse(_ value: String, _ expected: HTTPByteRange) {
        #expect(HTTPByteRange(rangeField: value) == expected)
    }

    /// Several ranges, other units, a last-pos before the first-pos, signs, overlong numbers: not served from
    /// storage (the origin decides).
    @Test(arguments: ["bytes=0-1,5-6", "items=0-1", "bytes=5-4", "bytes=-", "bytes=+1-2", "bytes=a-b", "bytes 0-1", "",
                      "bytes=0-1234567890123456789012", "bytes=0x1-2"])
    func otherRangeValuesDoNotParse(_ value: String) {
        #expect(HTTPByteRange(rangeField: value) == nil)
    }

    @Test func rangesResolveAgainstTheRepresentationLength() {
        #expect(HTTPByteRange.from(0, through: 1).resolved(length: 11) == 0...1)
        #expect(HTTPByteRange.from(1, through: nil).resolved(length: 11) == 1...10)
        #expect(HTTPByteRange.from(5, through: 500).resolved(length: 11) == 5...10)
        #expect(HTTPByteRange.suffix(1).resolved(length: 11) == 10...10)
        #expect(HTTPByteRange.suffix(50).resolved(length: 11) == 0...10)
        // Unsatisfiable (RFC 9110 §14.1.2): a first-pos at or past the end, a zero-length suffix, an empty representation.
        #expect(HTTPByteRange.from(11, through: nil).resolved(length: 11) == nil)
        #expect(HTTPByteRange.suffix(0).resolved(length: 11) == nil)
        #expect(HTTPByteRange.from(0, through: 0).resolved(length: 0) == nil)
    }

    @Test func contentRangeParsesOneRangeOfBytes() {
        #expect(HTTPContentRange("bytes 4-9/10") == HTTPContentRange(range: 4...9, completeLength: 10))
        #expect(HTTPContentRange(" bytes 0-4/* ") == HTTPContentRange(range: 0...4, completeLength: nil))
        #expect(HTTPContentRange(range: 0...4, completeLength: nil).fieldValue == "bytes 0-4/*")
        for invalid in ["bytes */10", "bytes 4-10/10", "bytes 5-4/10", "items 0-1/2", "bytes 0-1", "bytes -1/2", "bytes 0-1/x"] {
            #expect(HTTPContentRange(invalid) == nil, "\(invalid)")
        }
    }

    // MARK: Preconditions

    func stored(_ fields: [(String, String)]) -> HTTPHeaderFields {
        HTTPHeaderFields([("Date", HTTPDate.format(F.t0))] + fields.map { (name: $0.0, value: $0.1) })
    }

    func request(_ fields: [(String, String)]) -> HTTPHeaderFields {
        HTTPHeaderFields(fields.map { (name: $0.0, value: $0.1) })
    }

    @Test func ifNoneMatchComparesWeaklyAndStarMatchesAnything() {
        let strong = stored([("ETag", "\"abc\"")]), weak = stored([("ETag", "W/\"abc\"")])
        for (held, value, expected) in [(strong, "\"abc\"", true), (strong, "W/\"abc\"", true), (weak, "\"abc\"", true),
                                         (strong, "\"x\", \"abc\"", true), (strong, "\"x\"", false), (strong, "*", true),
                                         (stored([]), "*", true), (stored([]), "\"abc\"", false),
                                         // A caller's bare tag is read as quoted (conditional-etag-quoted-respond-unquoted).
                                         (strong, "abc", true), (strong, "abd", false)] {
            #expect(HTTPPreconditions.callerHolds(held, storedDate: F.t0, request: request([("If-None-Match", value)])) == expected,
                    "\(value)")
        }
    }

    @Test func ifModifiedSinceUsesLastModifiedElseTheStoredDate() {
        let lastModified = stored([("Last-Modified", HTTPDate.format(F.t0.addingTimeInterval(-3000)))])
        func ims(_ offset: TimeInterval) -> HTTPHeaderFields { request([("If-Modified-Since", HTTPDate.format(F.t0.addingTimeInterval(offset)))]) }
        #expect(HTTPPreconditions.callerHolds(lastModified, storedDate: F.t0, request: ims(-3000)))
        #expect(HTTPPreconditions.callerHolds(lastModified, storedDate: F.t0, request: ims(-2000)))
        #expect(!HTTPPreconditions.callerHolds(lastModified, storedDate: F.t0, request: ims(-4000)))
        // No Last-Modified: the stored Date (RFC 9111 §4.3.2), which is later than the date asked about.
        #expect(!HTTPPreconditions.callerHolds(stored([]), storedDate: F.t0, request: ims(-3000)))
        #expect(HTTPPreconditions.callerHolds(stored([]), storedDate: F.t0, request: ims(0)))
        // An invalid date is ignored; If-None-Match takes precedence (RFC 9110 §13.2.2).
        #expect(!HTTPPreconditions.callerHolds(lastModified, storedDate: F.t0, request: request([("If-Modified-Since", "yesterday")])))
        let both = request([("If-None-Match", "\"other\""), ("If-Modified-Since", HTTPDate.format(F.t0))])
        #expect(!HTTPPreconditions.callerHolds(stored([("ETag", "\"abc\""), ("Last-Modified", HTTPDate.format(F.t0.addingTimeInterval(-10)))]),
                                               storedDate: F.t0, request: both))
    }

    @Test func ifRangeNeedsAStrongEntityTagOrTheExactLastModified() {
        let lastModified = HTTPDate.format(F.t0.addingTimeInterval(-60))
        let held = stored([("ETag", "\"abc\""), ("Last-Modified", lastModified)])
        #expect(HTTPPreconditions.ifRangeMatches("\"abc\"", stored: held))
        #expect(!HTTPPreconditions.ifRangeMatches("W/\"abc\"", stored: held))
        #expect(!HTTPPreconditions.ifRangeMatches("\"abd\"", stored: held))
        #expect(!HTTPPreconditions.ifRangeMatches("\"abc\"", stored: stored([("ETag", "W/\"abc\"")])))
        #expect(HTTPPreconditions.ifRangeMatches(lastModified, stored: held))
        #expect(!HTTPPreconditions.ifRangeMatches(HTTPDate.format(F.t0), stored: held))
        #expect(!HTTPPreconditions.ifRangeMatches("garbage", stored: held))
    }

    @Test func onlyTheSameStrongETagMakesTwoPartsOneRepresentation() {
        #expect(HTTPPreconditions.sameStrongValidator(stored([("ETag", "\"a\"")]), stored([("ETag", "\"a\"")])))
        #expect(!HTTPPreconditions.sameStrongValidator(stored([("ETag", "W/\"a\"")]), stored([("ETag", "W/\"a\"")])))
        #expect(!HTTPPreconditions.sameStrongValidator(stored([("ETag", "\"a\"")]), stored([("ETag", "\"b\"")])))
        #expect(!HTTPPreconditions.sameStrongValidator(stored([]), stored([])))
    }
}

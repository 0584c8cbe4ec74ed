// The fuzz harness of the HTTP cache's header parsers, shared by the libFuzzer binary (Fuzz/Sources/HeaderFuzzer.swift;
// Fuzz/run.sh compiles this file with the parser sources into one module) and HeaderFuzzRegressionTests, so a
// stored finding is replayed through exactly the calls that found it.
import Foundation
#if canImport(OperationDownloader)
@testable import OperationDownloader
#endif

/// One target per parser; `headers` runs a header block through the freshness and storage rules.
enum HeaderFuzzTarget: String, CaseIterable, Sendable {
    case cacheControl = "cache-control"
    case httpDate = "http-date"
    case age
    case vary
    case etag
    case contentType = "content-type"
    case range
    case headers
}

/// A fixed clock: every run of an input is the same.
let headerFuzzNow = Date(timeIntervalSince1970: 1_700_000_000)

/// Runs `data` through `target` and returns the invariants it broke (empty: none). The fuzzer traps on a broken
/// invariant (a finding); the regression tests record it as one test's failure. Every parser must return a
/// value for any input; a trap inside one (overflow, bounds) is a finding too.
func headerFuzzOne(_ data: Data, target: HeaderFuzzTarget) -> [String] {
    let text = String(decoding: data, as: UTF8.self)
    var broken: [String] = []
    func check(_ holds: Bool, _ invariant: @autoclosure () -> String) { if !holds { broken.append(invariant()) } }
    switch target {
    case .cacheControl:
        let directives = CacheControlDirectives(text)
        if let maxAge = directives.maxAge { check(maxAge >= 0 && maxAge <= HTTPFieldList.deltaSecondsLimit, "max-age \(maxAge) out of range") }
    case .httpDate:
        if let date = HTTPDate.parse(text, now: headerFuzzNow) {
            // Whatever parses formats to an IMF-fixdate that parses to the same instant.
            check(HTTPDate.parse(HTTPDate.format(date), now: headerFuzzNow) == date, "date round trip: \(HTTPDate.format(date))")
        }
    case .age:
        if let age = HTTPAge.parse(text) { check(age >= 0 && age <= HTTPFieldList.deltaSecondsLimit, "age \(age) out of range") }
    case .vary:
        let vary = HTTPVary(text)
        for field in vary.fieldNames + ["accept", "accept-language"] {
            _ = HTTPVary.normalisedValue(text, field: field)
        }
    case .etag:
        if let tag = HTTPEntityTag(text) { check(tag.weakMatches(tag), "an entity tag does not weakly match itself") }
        _ = HTTPEntityTag.list(text)
    case .contentType:
        if let type = HTTPMediaType(text) {
            // The canonical form is a fixed point.
            check(HTTPMediaType(type.canonical)?.canonical == type.canonical, "media type canonical form: \(type.canonical)")
        }
    case .range:
        if let range = HTTPByteRange(rangeField: text) {
            for length in [0, 1, 10, 1 << 40] {
                // A resolved range lies within the representation.
                if let bytes = range.resolved(length: length) {
                    check(bytes.lowerBound >= 0 && bytes.upperBound < length, "range \(bytes) outside a length of \(length)")
                }
            }
        }
        if let part = HTTPContentRange(text) {
            // What parses formats to a value that parses back to it.
            check(HTTPContentRange(part.fieldValue) == part, "content-range round trip: \(part.fieldValue)")
        }
        _ = HTTPPreconditions.ifRangeMatches(text, stored: HTTPHeaderFields([("ETag", text), ("Last-Modified", text)]))
    case .headers:
        broken += headerFuzzBlock(text)
    }
    return broken
}

/// `Name: value` lines: the stored-response rules (lifetime, age, use, storability, stored fields, a 304
/// update) over them, as response and as request fields.
private func headerFuzzBlock(_ text: String) -> [String] {
    var pairs: [(name: String, value: String)] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: true).prefix(64) {
        guard let colon = line.firstIndex(of: ":") else { continue }
        pairs.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
    }
    var broken: [String] = []
    let headers = HTTPHeaderFields(pairs)
    let status = pairs.count.isMultiple(of: 2) ? 200 : 404
    let lifetime = HTTPFreshness.freshnessLifetime(headers, statusCode: status, responseDate: headerFuzzNow)
    if lifetime < 0 { broken.append("negative freshness lifetime \(lifetime)") }
    let age = HTTPFreshness.currentAge(headers, requestDate: headerFuzzNow, responseDate: headerFuzzNow, now: headerFuzzNow + 60)
    if age < 60 { broken.append("current age \(age) below the 60 s spent in the cache") }
    _ = HTTPFreshness.use(headers, statusCode: status, requestDate: headerFuzzNow, responseDate: headerFuzzNow, request: headers,
                          now: headerFuzzNow + 60)
    _ = HTTPFreshness.mayServeStaleOnError(headers, statusCode: status, requestDate: headerFuzzNow, responseDate: headerFuzzNow,
                                           request: headers, now: headerFuzzNow + 60)
    _ = HTTPFreshness.storability(method: "GET", statusCode: status, responseHeaders: headers, requestHeaders: headers)
    _ = HTTPFreshness.validators(headers)
    _ = HTTPFreshness.notModifiedMatches(stored: headers, notModified: headers)
    _ = HTTPPreconditions.callerHolds(headers, storedDate: headerFuzzNow, request: headers)
    _ = HTTPPreconditions.sameStrongValidator(headers, headers)
    let stored = HTTPCacheHeaderRules.fieldsForStorage(headers, bodyLength: 10, responseDate: headerFuzzNow)
    _ = HTTPCacheHeaderRules.updatedHeaders(stored: stored, notModified: headers, responseDate: headerFuzzNow)
    return broken
}

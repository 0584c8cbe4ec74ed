import Foundation

/// The Cache-Control directives (RFC 9111 §5.2, RFC 5861, RFC 8246) of a response or a request, parsed from
/// one field value (URLSession joins several lines with ", ").
///
/// Parsing follows the grammar `token [ "=" ( token / quoted-string ) ]`: names are case-insensitive, no
/// whitespace is allowed around `=` (such a member is malformed and ignored), commas inside quoted strings
/// do not split. Arguments in seconds are read by their leading digits (`3600.5`, `3600a`: 3600), as the
/// caches of the web read them. A directive given twice counts once, first occurrence first (RFC 9111
/// §4.2.1), except `max-age`: the largest valid value counts (two `Cache-Control` lines or a proxy's addition
/// disagreeing; the caching test suite's informational cases answer "reuse" in either order). A `max-age` with
/// no valid value (negative, single-quoted, missing, starting with a letter) makes the response stale
/// instead of being skipped. Unknown directives are ignored.
struct CacheControlDirectives: Equatable, Sendable {
    /// How stale a request accepts a response to be (`max-stale`).
    enum MaxStale: Equatable, Sendable {
        /// `max-stale` without argument: any staleness.
        case any
        case seconds(TimeInterval)
    }

    var noStore = false
    /// Unqualified `no-cache`: every use needs a successful revalidation.
    var noCache = false
    /// `no-cache="A, B"` (response): these fields are not stored; the rest may be used without revalidation.
    var noCacheFields: [String] = []
    var mustRevalidate = false
    var mustUnderstand = false
    var isPublic = false
    var isPrivate = false
    var immutable = false
    var onlyIfCached = false
    /// `max-age` in seconds (the largest valid occurrence).
    var maxAge: TimeInterval?
    /// `max-age` was given but never with valid delta-seconds: the response is stale (RFC 9111 §4.2.1).
    var maxAgeInvalid = false
    var staleWhileRevalidate: TimeInterval?
    var staleIfError: TimeInterval?
    /// Request only.
    var maxStale: MaxStale?
    /// Request only.
    var minFresh: TimeInterval?

    init() {}

    /// Parses `value`; nil gives no directives.
    init(_ value: String?) {
        guard let value else { return }
        var seen: Set<String> = []
        for element in HTTPFieldList.elements(value) {
            guard let (name, argument) = HTTPFieldList.nameAndArgument(element) else { continue }
            // Duplicates: the first occurrence counts, but every max-age is weighed.
            guard seen.insert(name).inserted || name == "max-age" else { continue }
            apply(name, argument)
        }
        if maxAge != nil { maxAgeInvalid = false }
    }

    private mutating func apply(_ name: String, _ argument: Substring?) {
        func seconds() -> TimeInterval? {
            guard let argument, let text = HTTPFieldList.tokenOrQuoted(argument) else { return nil }
            return HTTPFieldList.leadingDeltaSeconds(text)
        }
        switch name {
        case "no-store": noStore = true
        case "no-cache":
            if let argument, let text = HTTPFieldList.tokenOrQuoted(argument) {
                let fields = HTTPFieldList.elements(text).filter(HTTPFieldList.isToken).map { $0.lowercased() }
                // A qualified no-cache naming no valid field is treated as the unqualified form (stricter).
                if fields.isEmpty { noCache = true } else { noCacheFields = fields }
            } else {
                noCache = true
            }
        case "must-revalidate": mustRevalidate = true
        case "must-understand": mustUnderstand = true
        case "public": isPublic = true
        case "private": isPrivate = true
        case "immutable": immutable = true
        case "only-if-cached": onlyIfCached = true
        case "max-age":
            if let value = seconds() { maxAge = max(maxAge ?? 0, value) } else { maxAgeInvalid = true }
        case "stale-while-revalidate": staleWhileRevalidate = seconds()
        case "stale-if-error": staleIfError = seconds()
        case "max-stale":
            if argument == nil {
                maxStale = .any
            } else if let value = seconds() {
                maxStale = .seconds(value)
            }
        case "min-fresh": minFresh = seconds()
        default: break
        }
    }
}

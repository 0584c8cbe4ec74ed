import Foundation

/// The request preconditions a cache evaluates against a stored response (RFC 9111 §4.3.2, RFC 9110 §13),
/// as pure functions of header fields.
enum HTTPPreconditions {
    /// Whether the caller's own `If-None-Match` or `If-Modified-Since` says it already holds `stored`, so that
    /// the answer to its GET is a 304 (RFC 9110 §13.1.2, §13.1.3; If-None-Match takes precedence, §13.2.2):
    /// `*`, or one of its entity-tags (bare ones read as quoted) matching the stored ETag weakly; else, without If-None-Match, a stored
    /// Last-Modified — or, lacking one, the stored Date (RFC 9111 §4.3.2) — no later than If-Modified-Since.
    /// An invalid If-Modified-Since date is ignored.
    static func callerHolds(_ stored: HTTPHeaderFields, storedDate: Date, request: HTTPHeaderFields) -> Bool {
        if let ifNoneMatch = request["If-None-Match"] {
            guard let tags = HTTPEntityTag.list(ifNoneMatch) else { return true }  // "*": a representation exists
            // Bare tags on either side (`abc`) are read as the quoted tags they stand for.
            guard let etag = stored["ETag"].flatMap({ HTTPEntityTag(lenient: $0) }) else { return false }
            return tags.contains { $0.weakMatches(etag) }
        }
        guard let value = request["If-Modified-Since"], let since = HTTPDate.parse(value, now: storedDate) else { return false }
        let modified = stored["Last-Modified"].flatMap { HTTPDate.parse($0, now: storedDate) }
            ?? HTTPFreshness.dateValue(stored, responseDate: storedDate)
        return modified <= since
    }

    /// Whether `If-Range: value` lets a Range request be answered with a part of `stored` (RFC 9110 §13.1.5): an
    /// entity-tag must equal the stored ETag by strong comparison; an HTTP-date must be exactly the stored
    /// Last-Modified. Otherwise the whole representation is the answer.
    static func ifRangeMatches(_ value: String, stored: HTTPHeaderFields) -> Bool {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/") {
            guard let tag = HTTPEntityTag(trimmed), let etag = stored["ETag"].flatMap({ HTTPEntityTag($0) }) else { return false }
            return tag.strongMatches(etag)
        }
        guard let date = HTTPDate.parse(trimmed), let lastModified = stored["Last-Modified"].flatMap({ HTTPDate.parse($0) }) else {
            return false
        }
        return date == lastModified
    }

    /// Whether two stored responses are the same representation by a strong validator (RFC 9111 §3.4: only
    /// then may their parts be combined): both carry the same strong ETag.
    static func sameStrongValidator(_ a: HTTPHeaderFields, _ b: HTTPHeaderFields) -> Bool {
        guard let first = a["ETag"].flatMap({ HTTPEntityTag($0) }), let second = b["ETag"].flatMap({ HTTPEntityTag($0) }) else { return false }
        return first.strongMatches(second)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Storing partial content (RFC 9111 §3.3, §3.4): a 206 is kept as the part of its representation that
/// arrived, and parts of the same representation are combined. Stored parts answer only Range requests
/// within them (`CachedHTTPResponse.answer(to:)`).
extension HTTPImageCache {
    /// What a 206 is stored as. `fields` are its fields as stored (`fieldsForStorage`), `body` its body,
    /// `existing` what the cache holds for the same request. nil writes nothing: a complete stored response
    /// with the same strong validator already holds every byte, and a body longer than its Content-Range
    /// is malformed. Else the part — its Content-Range narrowed to the bytes that arrived (a shorter body is
    /// a transfer cut short) — or, with a stored part of the same representation (the same strong ETag and
    /// complete length) that it touches or overlaps, the two combined, the new fields updating the stored
    /// ones (RFC 9110 §15.3.7.3); once every byte is held, the complete 200.
    static func partToStore(fields: HTTPHeaderFields, body: Data, existing: CachedHTTPResponse?,
                            responseDate: Date) -> (statusCode: Int, fields: HTTPHeaderFields, body: Data)? {
        guard let declared = fields["Content-Range"].flatMap(HTTPContentRange.init), !body.isEmpty,
              body.count <= declared.range.count else { return nil }
        var range = declared.range.lowerBound...(declared.range.lowerBound + body.count - 1)
        var bytes = body
        var result = fields
        if let existing, existing.hasBody, HTTPPreconditions.sameStrongValidator(existing.headers, fields) {
            if existing.statusCode == 200 { return nil }
            if let held = existing.heldPart, held.completeLength == declared.completeLength,
               held.range.lowerBound <= range.upperBound + 1, range.lowerBound <= held.range.upperBound + 1 {
                let combined = min(held.range.lowerBound, range.lowerBound)...max(held.range.upperBound, range.upperBound)
                var joined = Data(count: combined.count)
                let oldStart = held.range.lowerBound - combined.lowerBound, newStart = range.lowerBound - combined.lowerBound
                joined.replaceSubrange(oldStart..<(oldStart + held.range.count), with: existing.data)
                joined.replaceSubrange(newStart..<(newStart + bytes.count), with: bytes)
                (range, bytes) = (combined, joined)
                result = HTTPCacheHeaderRules.updatedHeaders(stored: existing.headers, notModified: fields, responseDate: responseDate)
            }
        }
        result.set("Content-Length", String(bytes.count))
        if let complete = declared.completeLength, range == 0...(complete - 1) {
            result.set("Content-Range", nil)
            return (200, result, bytes)
        }
        result.set("Content-Range", HTTPContentRange(range: range, completeLength: declared.completeLength).fieldValue)
        return (206, result, bytes)
    }

    /// Whether `response`'s Content-Location names `url` (the same cache key), as a POST response needs to
    /// be stored for later GETs of `url` (RFC 9110 §9.3.3).
    static func contentLocation(of response: HTTPURLResponse, names url: URL) -> Bool {
        guard let value = response.value(forHTTPHeaderField: "Content-Location"),
              let target = URL(string: value, relativeTo: url)?.absoluteURL else { return false }
        return HTTPCacheKey.key(for: target) != nil && HTTPCacheKey.key(for: target) == HTTPCacheKey.key(for: url)
    }
}

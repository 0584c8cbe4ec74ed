import Foundation

/// What a stored response answers to one request: the whole response, a 304 for the caller's own
/// conditional request, or a part of it for a Range request (Docs/HTTPCache.md, "Range" and "Conditional
/// requests").
extension CachedHTTPResponse {
    /// A stored part of a representation (a 206): it answers only Range requests within the bytes it holds
    /// (RFC 9111 §3.3), never a request for the whole.
    var isPartial: Bool { statusCode == 206 }

    /// For a stored 206: the bytes it holds and the representation's length (nil: unknown). nil when its
    /// Content-Range does not describe its body exactly (the cache stores parts that way).
    var heldPart: HTTPContentRange? {
        guard isPartial, hasBody, let part = headers["Content-Range"].flatMap(HTTPContentRange.init),
              part.range.count == data.count else { return nil }
        return part
    }

    /// The answer to a request with header fields `request`, in RFC 9110 §13.2.2's order: a 304 when the
    /// caller's own If-None-Match / If-Modified-Since show it holds this (complete, 2xx) response (RFC 9111
    /// §4.3.2); for a 200 and a `Range` (with a matching `If-Range`, if any) the part it asks for as a 206;
    /// else the whole response. nil when storage cannot answer and the request goes to the origin: a stored
    /// part and a request for the whole (or a range it does not hold), a Range this cache does not serve
    /// (several ranges, another unit, malformed, unsatisfiable: the origin decides, e.g. 416), a
    /// precondition only the origin evaluates (If-Match, If-Unmodified-Since).
    func answer(to request: HTTPHeaderFields) -> CachedHTTPResponse? {
        // Every hit comes here, and most requests carry none of these fields: one pass to see.
        guard request.fields.contains(where: { Self.answerFields.contains($0.name.lowercased()) }) else {
            return isPartial ? nil : self
        }
        // Preconditions for the origin (RFC 9111 §4.3.2; RFC 9110 §13.1.1, §13.1.4): the request goes there.
        if request["If-Match"] != nil || request["If-Unmodified-Since"] != nil { return nil }
        if hasBody, !isPartial, (200..<300).contains(statusCode),
           HTTPPreconditions.callerHolds(headers, storedDate: storedDate, request: request) {
            return notModified()
        }
        guard let rangeValue = request["Range"] else { return isPartial ? nil : self }
        // A Range applies to a 200 (RFC 9110 §14.2): for any other stored status the origin's answer is that status.
        guard statusCode == 200 || isPartial else { return self }
        if let ifRange = request["If-Range"], !HTTPPreconditions.ifRangeMatches(ifRange, stored: headers) {
            return isPartial ? nil : self
        }
        // A stored part answers the very Range it was fetched with as the origin did: itself, as it arrived.
        if isPartial, heldPart != nil, varyValues[Self.requestedRangeKey] == rangeValue { return self }
        guard let range = HTTPByteRange(rangeField: rangeValue) else { return nil }
        return part(range)
    }

    /// Where a stored part keeps the `Range` of the request it answered (with the varied request values, which a
    /// name with a NUL can never clash with).
    static let requestedRangeKey = "\u{0}range"

    /// The request fields that change the answer (lower-cased).
    private static let answerFields: Set<String> = ["if-match", "if-unmodified-since", "if-none-match", "if-modified-since",
                                                     "range", "if-range"]

    /// The bytes `range` selects, as a 206 with their Content-Range and Content-Length (RFC 9110 §15.3.7);
    /// nil unless this response holds every one of them.
    func part(_ range: HTTPByteRange) -> CachedHTTPResponse? {
        guard hasBody else { return nil }
        let held: ClosedRange<Int>
        let completeLength: Int?
        if isPartial {
            guard let part = heldPart else { return nil }
            (held, completeLength) = (part.range, part.completeLength)
        } else {
            guard statusCode == 200, !data.isEmpty else { return nil }
            (held, completeLength) = (0...(data.count - 1), data.count)
        }
        let wanted: ClosedRange<Int>
        if let completeLength {
            guard let resolved = range.resolved(length: completeLength) else { return nil }
            wanted = resolved
        } else {
            // An unknown complete length: only a range with both ends is known to lie within the part.
            guard case .from(let first, let last?) = range else { return nil }
            wanted = first...last
        }
        guard held.contains(wanted.lowerBound), held.contains(wanted.upperBound) else { return nil }
        let start = data.startIndex + (wanted.lowerBound - held.lowerBound)
        let bytes = data.subdata(in: start..<(start + wanted.count))
        var fields = headers
        fields.set("Content-Range", HTTPContentRange(range: wanted, completeLength: completeLength).fieldValue)
        fields.set("Content-Length", String(bytes.count))
        return replacing(statusCode: 206, headers: fields, data: bytes)
    }

    /// The 304 a cache generates from this response (RFC 9110 §15.4.5): the fields a 200 would carry that
    /// guide caches (Cache-Control, Content-Location, Date, ETag, Expires, Vary; Last-Modified when there is
    /// no ETag), no content.
    func notModified() -> CachedHTTPResponse? {
        var kept: Set<String> = ["cache-control", "content-location", "date", "etag", "expires", "vary"]
        if headers["ETag"] == nil { kept.insert("last-modified") }
        let fields = HTTPHeaderFields(headers.fields.filter { kept.contains($0.name.lowercased()) })
        return replacing(statusCode: 304, headers: fields, data: Data())
    }
}

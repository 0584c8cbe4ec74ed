import Foundation

/// RFC 9111 rules for a private cache, as pure functions of header fields and dates.
///
/// Every function takes `now` (or the stored dates) as an argument so that tests are deterministic and the
/// cache never reads the clock in more than one place.
enum HTTPFreshness {
    /// Heuristic freshness (only for responses with Last-Modified and no explicit lifetime) is this fraction
    /// of the time since the last modification (RFC 9111 §4.2.2 suggests 10%) ...
    static let heuristicFraction = 0.1
    /// ... capped at one day, past which RFC 7234 required a warning.
    static let heuristicCap: TimeInterval = 86_400
    /// The only request header fields a `Vary` may name for the response to be stored: an image
    /// downloader sends few headers and these two are the ones image servers negotiate on.
    static let honouredVaryFields: Set<String> = ["accept", "accept-encoding"]
    /// Status codes stored: only complete, successful representations are useful to an image downloader.
    static let storableStatusCodes: Set<Int> = [200, 203]

    /// Why a response is not stored, or the request header fields its `Vary` names.
    enum Storability: Equatable, Sendable {
        case storable(varyFields: [String])
        case notStorable(String)
    }

    /// Whether a response may be stored (RFC 9111 §3) and, if so, which request fields it varies on.
    static func storability(method: String, statusCode: Int, responseHeaders: HTTPHeaderFields,
                            requestHeaders: HTTPHeaderFields) -> Storability {
        guard method.uppercased() == "GET" else { return .notStorable("method \(method)") }
        guard storableStatusCodes.contains(statusCode) else { return .notStorable("status \(statusCode)") }
        if CacheControlDirectives(requestHeaders["Cache-Control"]).noStore {
            return .notStorable("request Cache-Control: no-store")
        }
        if CacheControlDirectives(responseHeaders["Cache-Control"]).noStore {
            return .notStorable("Cache-Control: no-store")
        }
        guard let vary = varyFields(responseHeaders) else {
            return .notStorable("Vary: \(responseHeaders["Vary"] ?? "")")
        }
        return .storable(varyFields: vary)
    }

    /// The lower-cased request fields named by `Vary`, or nil when `Vary` names `*` or any field other than
    /// Accept / Accept-Encoding (such a response is not stored).
    static func varyFields(_ responseHeaders: HTTPHeaderFields) -> [String]? {
        guard let vary = responseHeaders["Vary"] else { return [] }
        var fields: [String] = []
        for item in vary.split(separator: ",").prefix(64) {
            let name = item.trimmingCharacters(in: .whitespaces).lowercased()
            if name.isEmpty { continue }
            guard honouredVaryFields.contains(name) else { return nil }
            if !fields.contains(name) { fields.append(name) }
        }
        return fields.sorted()
    }

    /// The values of `fields` in `request`, normalised, for storing next to the response and comparing later.
    static func varyValues(_ fields: [String], request: HTTPHeaderFields) -> [String: String] {
        var values: [String: String] = [:]
        for field in fields {
            if let value = request[field] { values[field] = normalisedVaryValue(value) }
        }
        return values
    }

    /// Whether a new request selects the stored response: every varied field must match (absent = absent).
    static func varyMatches(storedValues: [String: String], fields: [String], request: HTTPHeaderFields) -> Bool {
        fields.allSatisfy { field in
            storedValues[field] == request[field].map(normalisedVaryValue)
        }
    }

    private static func normalisedVaryValue(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0 != " " && $0 != "\t" })
    }

    /// The freshness lifetime (RFC 9111 §4.2.1): max-age, else Expires − Date, else the Last-Modified heuristic,
    /// else zero. `responseDate` stands in for a missing Date header.
    static func freshnessLifetime(_ headers: HTTPHeaderFields, responseDate: Date) -> TimeInterval {
        let directives = CacheControlDirectives(headers["Cache-Control"])
        if directives.maxAgeInvalid { return 0 }
        if let maxAge = directives.maxAge { return maxAge }
        let date = dateValue(headers, responseDate: responseDate)
        if let expires = headers["Expires"] {
            // An invalid Expires (e.g. "0") means already expired.
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        if let lastModifiedValue = headers["Last-Modified"], let lastModified = HTTPDate.parse(lastModifiedValue) {
            let sinceModified = date.timeIntervalSince(lastModified)
            return min(max(0, sinceModified * heuristicFraction), heuristicCap)
        }
        return 0
    }

    /// The current age (RFC 9111 §4.2.3) of a response requested at `requestDate`, received at `responseDate`.
    static func currentAge(_ headers: HTTPHeaderFields, requestDate: Date, responseDate: Date, now: Date) -> TimeInterval {
        let date = dateValue(headers, responseDate: responseDate)
        let ageValue = headers["Age"].flatMap { value -> TimeInterval? in
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.count <= 10, trimmed.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return TimeInterval(trimmed)
        } ?? 0
        let apparentAge = max(0, responseDate.timeIntervalSince(date))
        let responseDelay = max(0, responseDate.timeIntervalSince(requestDate))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(responseDate))
        return correctedInitialAge + residentTime
    }

    /// Whether the stored response may be served to `request` without contacting the server: not marked
    /// no-cache (Cache-Control or, without Cache-Control, Pragma), within its lifetime, and within any
    /// `max-age` / `no-cache` the request itself carries.
    static func isFresh(_ headers: HTTPHeaderFields, requestDate: Date, responseDate: Date,
                        request: HTTPHeaderFields = HTTPHeaderFields(), now: Date) -> Bool {
        if requiresValidation(headers) || requiresValidation(request) { return false }
        let age = currentAge(headers, requestDate: requestDate, responseDate: responseDate, now: now)
        let requestDirectives = CacheControlDirectives(request["Cache-Control"])
        if requestDirectives.maxAgeInvalid { return false }
        if let requestMaxAge = requestDirectives.maxAge, age > requestMaxAge { return false }
        return freshnessLifetime(headers, responseDate: responseDate) > age
    }

    /// Whether a stale response may still be served when the server cannot be reached (RFC 9111 §4.2.4):
    /// not when it says must-revalidate or no-cache.
    static func mayServeStale(_ headers: HTTPHeaderFields) -> Bool {
        let directives = CacheControlDirectives(headers["Cache-Control"])
        return !directives.mustRevalidate && !requiresValidation(headers)
    }

    /// Conditional request headers for revalidating a stored response: If-None-Match from ETag and
    /// If-Modified-Since from Last-Modified (sent verbatim, as RFC 9110 §13.1.3 recommends). Empty when the
    /// response carries no validator.
    static func validators(_ headers: HTTPHeaderFields) -> [String: String] {
        var result: [String: String] = [:]
        if let etag = headers["ETag"], !etag.isEmpty { result["If-None-Match"] = etag }
        if let lastModified = headers["Last-Modified"], HTTPDate.parse(lastModified) != nil {
            result["If-Modified-Since"] = lastModified
        }
        return result
    }

    /// Whether a 304 describes the stored response: when both carry an ETag they must match (weak comparison).
    static func notModifiedMatches(stored: HTTPHeaderFields, notModified: HTTPHeaderFields) -> Bool {
        guard let new = notModified["ETag"], let old = stored["ETag"] else { return true }
        func opaque(_ tag: String) -> String {
            let t = tag.trimmingCharacters(in: .whitespaces)
            return t.hasPrefix("W/") ? String(t.dropFirst(2)) : t
        }
        return opaque(new) == opaque(old)
    }

    /// The stored header fields updated from a 304 (RFC 9111 §3.2 / §4.3.4): its fields replace the stored
    /// ones, except those that describe the body or the connection, which stay as stored.
    static func updatedHeaders(stored: HTTPHeaderFields, notModified: HTTPHeaderFields) -> HTTPHeaderFields {
        var result = stored
        for field in notModified.fields where !HTTPCacheHeaderRules.isKeptFromStoredResponse(field.name) {
            result.set(field.name, field.value)
        }
        return result
    }

    private static func requiresValidation(_ headers: HTTPHeaderFields) -> Bool {
        if let cacheControl = headers["Cache-Control"] { return CacheControlDirectives(cacheControl).noCache }
        return headers["Pragma"].map { $0.lowercased().contains("no-cache") } ?? false
    }

    private static func dateValue(_ headers: HTTPHeaderFields, responseDate: Date) -> Date {
        headers["Date"].flatMap(HTTPDate.parse) ?? responseDate
    }
}

/// Which header fields a stored response keeps, drops, or takes from a later 304.
enum HTTPCacheHeaderRules {
    /// Hop-by-hop fields, and Set-Cookie (cookies are handled per request, never replayed from the cache).
    private static let droppedOnStore: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "set-cookie", "set-cookie2", "proxy-authenticate",
    ]
    /// Fields describing the stored body, which a 304 must not overwrite.
    private static let keptFromStored: Set<String> = [
        "content-length", "content-encoding", "content-range", "transfer-encoding", "content-type",
    ]

    static func isKeptFromStoredResponse(_ name: String) -> Bool {
        let lower = name.lowercased()
        return keptFromStored.contains(lower) || droppedOnStore.contains(lower)
    }

    /// The fields to store with a body of `bodyLength` bytes. URLSession has already undone any
    /// Content-Encoding, so that field is removed and Content-Length set to the stored length.
    static func fieldsForStorage(_ headers: HTTPHeaderFields, bodyLength: Int) -> HTTPHeaderFields {
        var result = HTTPHeaderFields(headers.fields.filter { !droppedOnStore.contains($0.name.lowercased()) })
        result.set("Content-Encoding", nil)
        result.set("Content-Length", String(bodyLength))
        return result
    }
}

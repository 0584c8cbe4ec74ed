import Foundation

/// RFC 9111 rules for a private cache, as pure functions of header fields and dates.
///
/// Every function takes `now` (or the stored dates) as an argument so that tests are deterministic and the
/// cache never reads the clock in more than one place.
enum HTTPFreshness {
    /// Heuristic freshness is this fraction of the time since Last-Modified (RFC 9111 §4.2.2 suggests 10%) ...
    static let heuristicFraction = 0.1
    /// ... capped at one day, past which RFC 7234 asked for a warning: an image changed at its origin shows
    /// within a day even when the server says nothing about freshness.
    static let heuristicCap: TimeInterval = 86_400
    /// ... and at least this (a file changed seconds ago is still reused for a few seconds, as CDNs' default
    /// TTLs do, instead of asking again at once).
    static let heuristicMinimum: TimeInterval = 10
    /// RFC 9110 §15.1: statuses a cache may store and give a heuristic lifetime without explicit freshness.
    static let heuristicallyCacheableStatusCodes: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
    /// The statuses registered by RFC 9110: `must-understand` lets a response with one of these be stored
    /// despite `no-store`, and keeps any other status from being stored.
    static let understoodStatusCodes: Set<Int> = Set([100, 101] + Array(200...206) + Array(300...305) + [307, 308]
        + Array(400...417) + [421, 422, 426] + Array(500...505))
    /// Origin answers that count as errors for stale-if-error (RFC 5861 §4).
    static let errorStatusCodes: Set<Int> = [500, 502, 503, 504]
    /// Statuses that say the origin cannot answer now (a gateway without its upstream, an origin overloaded or in
    /// maintenance): like a dropped connection, the cache is disconnected (RFC 9111 §4.2.4), so a stored
    /// success may stand in for them even without stale-if-error, as CDNs serve stale on these.
    static let originUnavailableStatusCodes: Set<Int> = [502, 503, 504]

    /// Why a response is not stored, or the request fields its `Vary` names.
    enum Storability: Equatable, Sendable {
        case storable(varyFields: [String])
        case notStorable(String)
    }

    /// What a stored response may be used for, for one request at one time.
    enum Use: Equatable, Sendable {
        /// Fresh: serve it without contacting the server.
        case fresh
        /// Stale, but the request's `max-stale` accepts it: serve it without contacting the server.
        case staleAcceptedByRequest
        /// Stale within `stale-while-revalidate`: serve it now and revalidate in the background.
        case staleWhileRevalidate
        /// Must be revalidated (or fetched) before use.
        case validate
    }

    // MARK: Storing

    /// Whether a response may be stored (RFC 9111 §3) and, if so, which request fields it varies on. A response
    /// to POST is stored (for later GETs of its URL) only with explicit freshness and a Content-Location naming
    /// that URL (`contentLocationIsTarget`, RFC 9110 §9.3.3); a 206 only with one byte range in its
    /// Content-Range (RFC 9111 §3.3).
    static func storability(method: String, statusCode: Int, responseHeaders: HTTPHeaderFields,
                            requestHeaders: HTTPHeaderFields, contentLocationIsTarget: Bool = false) -> Storability {
        let isPOST = method.uppercased() == "POST"
        guard method.uppercased() == "GET" || isPOST else { return .notStorable("method \(method)") }
        guard statusCode >= 200 else { return .notStorable("interim status \(statusCode)") }
        guard statusCode != 304 else { return .notStorable("status \(statusCode)") }
        if statusCode == 206, responseHeaders["Content-Range"].flatMap(HTTPContentRange.init) == nil {
            return .notStorable("206 without one byte range in Content-Range")
        }
        if CacheControlDirectives(requestHeaders["Cache-Control"]).noStore {
            return .notStorable("request Cache-Control: no-store")
        }
        let directives = CacheControlDirectives(responseHeaders["Cache-Control"])
        let understood = understoodStatusCodes.contains(statusCode)
        if directives.mustUnderstand {
            // RFC 9111 §5.2.2.3: only a cache that implements the status may store it, and it ignores no-store.
            guard understood else { return .notStorable("must-understand and status \(statusCode)") }
        } else if directives.noStore {
            return .notStorable("Cache-Control: no-store")
        }
        if isPOST, !contentLocationIsTarget || (directives.maxAge == nil && responseHeaders["Expires"] == nil) {
            return .notStorable("POST without explicit freshness and a Content-Location naming its URL")
        }
        let vary = HTTPVary(responseHeaders["Vary"])
        if vary == .any { return .notStorable("Vary: \(responseHeaders["Vary"] ?? "")") }
        let explicitlyCacheable = directives.maxAge != nil || directives.maxAgeInvalid || responseHeaders["Expires"] != nil
            || directives.isPublic || directives.isPrivate
        guard explicitlyCacheable || heuristicallyCacheableStatusCodes.contains(statusCode) else {
            return .notStorable("status \(statusCode) without explicit freshness")
        }
        return .storable(varyFields: vary.fieldNames)
    }

    // MARK: Freshness and age

    /// The freshness lifetime (RFC 9111 §4.2.1): max-age, else Expires − Date (an invalid Expires means
    /// already expired), else — for heuristically cacheable statuses or `public`/`private` responses with a
    /// Last-Modified before their Date — 10% of Date − Last-Modified, at least `heuristicMinimum`, at most
    /// `heuristicCap`; else zero. `responseDate` stands in for a
    /// missing or invalid Date.
    static func freshnessLifetime(_ headers: HTTPHeaderFields, statusCode: Int, responseDate: Date) -> TimeInterval {
        let directives = CacheControlDirectives(headers["Cache-Control"])
        if directives.maxAgeInvalid { return 0 }
        if let maxAge = directives.maxAge { return maxAge }
        let date = dateValue(headers, responseDate: responseDate)
        if let expires = headers["Expires"] {
            // An invalid Expires (e.g. "0", or two lines joined) means already expired (RFC 9111 §5.3).
            guard let expiry = HTTPDate.parse(expires, now: responseDate) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        let heuristic = heuristicallyCacheableStatusCodes.contains(statusCode) || directives.isPublic || directives.isPrivate
        if heuristic, let lastModifiedValue = headers["Last-Modified"],
           let lastModified = HTTPDate.parse(lastModifiedValue, now: responseDate) {
            let sinceModified = date.timeIntervalSince(lastModified)
            guard sinceModified > 0 else { return 0 }
            return min(max(heuristicMinimum, sinceModified * heuristicFraction), heuristicCap)
        }
        return 0
    }

    /// The current age (RFC 9111 §4.2.3) of a response requested at `requestDate`, received at `responseDate`.
    static func currentAge(_ headers: HTTPHeaderFields, requestDate: Date, responseDate: Date, now: Date) -> TimeInterval {
        let date = dateValue(headers, responseDate: responseDate)
        let ageValue = HTTPAge.parse(headers["Age"]) ?? 0
        let apparentAge = max(0, responseDate.timeIntervalSince(date))
        let responseDelay = max(0, responseDate.timeIntervalSince(requestDate))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(responseDate))
        return correctedInitialAge + residentTime
    }

    /// What the stored response (`headers`, `statusCode`, its dates) may be used for by a request with
    /// header fields `request` at `now`: response `no-cache`, request `no-cache` / `max-age` / `min-fresh`
    /// force validation; request `max-stale` and response `stale-while-revalidate` let a stale response
    /// be used, never past `must-revalidate` or `no-cache`.
    static func use(_ headers: HTTPHeaderFields, statusCode: Int, requestDate: Date, responseDate: Date,
                    request: HTTPHeaderFields = HTTPHeaderFields(), now: Date) -> Use {
        let response = CacheControlDirectives(headers["Cache-Control"])
        let requested = CacheControlDirectives(request["Cache-Control"])
        if response.noCache || requested.noCache { return .validate }
        let lifetime = freshnessLifetime(headers, statusCode: statusCode, responseDate: responseDate)
        let age = currentAge(headers, requestDate: requestDate, responseDate: responseDate, now: now)
        if requested.maxAgeInvalid { return .validate }
        if let maxAge = requested.maxAge, age > maxAge { return .validate }
        let fresh = lifetime > age + (requested.minFresh ?? 0)
        if fresh { return .fresh }
        // Stale (or not fresh enough for min-fresh): only the unrestricted forms below may serve it.
        guard !response.mustRevalidate, requested.minFresh == nil, lifetime <= age else { return .validate }
        let staleness = age - lifetime
        switch requested.maxStale {
        case .any: return .staleAcceptedByRequest
        case .seconds(let limit) where staleness <= limit: return .staleAcceptedByRequest
        default: break
        }
        if requested.maxAge == nil, let window = response.staleWhileRevalidate, staleness <= window {
            return .staleWhileRevalidate
        }
        return .validate
    }

    /// Whether the stored response may stand in for an error (a failed request, or a 500/502/503/504) at
    /// `now`: within the response's or the request's `stale-if-error` window (RFC 5861 §4), and never
    /// with `must-revalidate` or `no-cache`, which forbid any use without validation.
    static func mayServeStaleOnError(_ headers: HTTPHeaderFields, statusCode: Int, requestDate: Date, responseDate: Date,
                                     request: HTTPHeaderFields = HTTPHeaderFields(), now: Date) -> Bool {
        let response = CacheControlDirectives(headers["Cache-Control"])
        guard !response.mustRevalidate, !response.noCache else { return false }
        let window = max(response.staleIfError ?? -1, CacheControlDirectives(request["Cache-Control"]).staleIfError ?? -1)
        guard window >= 0 else { return false }
        let lifetime = freshnessLifetime(headers, statusCode: statusCode, responseDate: responseDate)
        let age = currentAge(headers, requestDate: requestDate, responseDate: responseDate, now: now)
        return age - lifetime <= window
    }

    /// Whether the stored response may be served when the origin cannot be reached at all (RFC 9111 §4.2.4
    /// allows a disconnected cache to serve stale responses): not when it says `must-revalidate` or
    /// `no-cache`, which forbid any use without validation.
    static func mayServeStaleWhenDisconnected(_ headers: HTTPHeaderFields) -> Bool {
        let response = CacheControlDirectives(headers["Cache-Control"])
        return !response.mustRevalidate && !response.noCache
    }

    /// Transport errors that mean the origin could not be reached or did not answer: the cache is
    /// disconnected. Not cancellation, not the caller's own mistakes, not TLS failures (a certificate
    /// problem is never hidden behind a stored response).
    static func isDisconnection(_ error: URLError) -> Bool {
        switch error.code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .networkConnectionLost, .notConnectedToInternet,
             .timedOut, .badServerResponse, .cannotLoadFromNetwork, .internationalRoamingOff, .dataNotAllowed,
             .callIsActive, .zeroByteResource, .cannotParseResponse:
            return true
        case .unknown:
            // corelibs reports a connection closed mid-response (FIN) as -1, but also TLS failures ("SSL
            // certificate problem"), which are not a disconnection.
            let underlying = (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.localizedDescription ?? ""
            let text = (error.localizedDescription + " " + underlying).lowercased()
            return !["ssl", "tls", "certificate"].contains { text.contains($0) }
        default:
            return false
        }
    }

    // MARK: Validation

    /// Conditional request header fields for revalidating a stored response: If-None-Match with the ETag
    /// as received (quotes, `W/`; an unquoted one, which is not an entity-tag, in quotes), and If-Modified-Since with the Last-Modified value verbatim
    /// (RFC 9110 §13.1.3). Empty when the response carries no validator.
    static func validators(_ headers: HTTPHeaderFields) -> [String: String] {
        var result: [String: String] = [:]
        if let etag = headers["ETag"], !etag.isEmpty { result["If-None-Match"] = HTTPEntityTag.quotingBareTags(etag) }
        if let lastModified = headers["Last-Modified"], HTTPDate.parse(lastModified) != nil {
            result["If-Modified-Since"] = lastModified
        }
        return result
    }

    /// Whether a 304 describes the stored response (RFC 9111 §4.3.4): a strong ETag in the 304 must equal the
    /// stored strong ETag; a weak one must match weakly; without an ETag, a Last-Modified in the 304 must
    /// equal the stored one; a 304 without validators describes the response it was asked about.
    static func notModifiedMatches(stored: HTTPHeaderFields, notModified: HTTPHeaderFields) -> Bool {
        if let new = notModified["ETag"] {
            guard let old = stored["ETag"] else { return false }
            guard let newTag = HTTPEntityTag(new), let oldTag = HTTPEntityTag(old) else {
                // Malformed tags: only the same text names the same representation.
                return new.trimmingCharacters(in: .whitespaces) == old.trimmingCharacters(in: .whitespaces)
            }
            return newTag.isWeak ? newTag.weakMatches(oldTag) : newTag.strongMatches(oldTag)
        }
        if let new = notModified["Last-Modified"], let old = stored["Last-Modified"] {
            return HTTPDate.parse(new) != nil && HTTPDate.parse(new) == HTTPDate.parse(old)
        }
        return true
    }

    static func dateValue(_ headers: HTTPHeaderFields, responseDate: Date) -> Date {
        headers["Date"].flatMap { HTTPDate.parse($0, now: responseDate) } ?? responseDate
    }
}

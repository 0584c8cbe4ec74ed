import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPImageCache {
    /// Stores `response` for `request` when RFC 9111 allows it: with its body `data`, or without (nil: an
    /// error status the download rejects at the header, kept so that the same error is answered without a
    /// request while it is fresh). A 2xx or 3xx response that may not be stored (no-store, `Vary: *`, too
    /// large) removes the older entry for the URL, which it supersedes; an error status that may not be
    /// stored leaves it alone. A 206 is stored as a part (`partToStore`); a POST response, for later GETs,
    /// only as RFC 9110 §9.3.3 allows. `wait: false` queues the disk write (the caller is on a network thread).
    /// - Parameters:
    ///   - requestDate: when the request was sent; `responseDate`: when the response arrived (for the age).
    ///   - authenticated: the transport answered an authentication challenge with a credential (a shared cache
    ///     then stores the response only where RFC 9111 §3.5 allows: HTTPSharedCacheRules.swift).
    func store(_ response: HTTPURLResponse, data: Data?, for request: URLRequest, requestDate: Date, responseDate: Date,
               wait: Bool = true, authenticated: Bool = false) {
        guard let url = request.url, let key = HTTPCacheKey.key(for: url) else { return }
        let requestHeaders = HTTPHeaderFields(request: request)
        let responseHeaders = HTTPHeaderFields(response)
        let method = (request.httpMethod ?? "GET").uppercased()
        let storability = HTTPFreshness.storability(
            method: method, statusCode: response.statusCode, responseHeaders: responseHeaders, requestHeaders: requestHeaders,
            contentLocationIsTarget: method == "POST" && Self.contentLocation(of: response, names: url))
        let sharedRefusal = layer.isShared
            ? HTTPSharedCacheRules.refusal(request: requestHeaders, response: responseHeaders, authenticated: authenticated) : nil
        guard case .storable(let fields) = storability, sharedRefusal == nil, (data?.count ?? 0) <= layer.maximumBodySize else {
            if response.statusCode < 400, response.statusCode != 206 { layer.remove(fileNames(for: request), wait: wait) }
            return
        }
        var values = Self.varyValues(fields, request: requestHeaders)
        var statusCode = response.statusCode
        var storedFields = HTTPCacheHeaderRules.fieldsForStorage(responseHeaders, bodyLength: data?.count, responseDate: responseDate)
        var body = data ?? Data()
        if statusCode == 206 {
            // A part: stored with its body only, and combined with a stored part of the same representation.
            guard let data, let part = Self.partToStore(fields: storedFields, body: data, existing: storedResponse(for: request),
                                                        responseDate: responseDate) else { return }
            (statusCode, storedFields, body) = part
            // The part as it arrived (not combined with another) answers the same Range again as the origin did.
            if statusCode == 206, body == data, let range = requestHeaders["Range"] { values[CachedHTTPResponse.requestedRangeKey] = range }
        }
        let entry = HTTPCacheEntryFile(
            kind: data == nil ? .headersOnly : .response, key: key, statusCode: statusCode, headers: storedFields,
            varyValues: values, requestDate: min(requestDate, responseDate), responseDate: responseDate, body: body)
        let primary = HTTPCacheKey.fileName(for: key)
        guard !fields.isEmpty else {
            layer.write(entry, as: primary, url: url, wait: wait)
            return
        }
        // A response with Vary: one file per variant, named through the URL's variant index. The index keeps
        // its generation while Vary names the same fields, so the other variants stay reachable.
        var generation: String?
        if case .variantIndex(let indexFields, let existing)? = layer.read(primary, key: key, url: url)?.content, indexFields == fields {
            generation = existing
        }
        let current = generation ?? UUID().uuidString
        layer.write(entry, as: HTTPCacheKey.variantFileName(for: key, generation: current, values: values, fields: fields),
                    url: url, wait: wait)
        if generation == nil {
            let index = HTTPCacheEntryFile(
                kind: .variantIndex, key: key, statusCode: 200, headers: HTTPHeaderFields([("Vary", fields.joined(separator: ", "))]),
                varyValues: [:], requestDate: responseDate, responseDate: responseDate, body: Data(current.utf8))
            layer.write(index, as: primary, url: url, wait: wait)
        }
    }

    /// Applies a 304 to `stored` (the response it revalidated): the 304's fields update the stored ones (RFC
    /// 9111 §3.2), the dates become those of the revalidation, and the updated response is returned at once.
    /// Its file is rewritten on the cache's I/O queue, never in the caller's thread (the session's delegate
    /// queue); until then it is served from memory. Nil when the 304's validator names another response
    /// (RFC 9111 §4.3.4): the caller then fetches the resource anew.
    func refreshed(with notModified: HTTPURLResponse, for request: URLRequest, stored: CachedHTTPResponse,
                   requestDate: Date, responseDate: Date) -> CachedHTTPResponse? {
        guard let url = request.url else { return nil }
        let update = HTTPHeaderFields(notModified)
        guard HTTPFreshness.notModifiedMatches(stored: stored.headers, notModified: update) else { return nil }
        let headers = HTTPCacheHeaderRules.updatedHeaders(stored: stored.headers, notModified: update, responseDate: responseDate)
        let entry = HTTPCacheEntryFile(
            kind: stored.hasBody ? .response : .headersOnly, key: stored.key, statusCode: stored.statusCode, headers: headers,
            varyValues: stored.varyValues, requestDate: min(requestDate, responseDate), responseDate: responseDate,
            body: stored.data)
        guard var refreshed = CachedHTTPResponse(entry: entry, url: url, fileName: stored.fileName) else { return nil }
        refreshed.appliesSharedRules = stored.appliesSharedRules
        let directives = CacheControlDirectives(headers["Cache-Control"])
        let sharedRefusal = layer.isShared
            ? HTTPSharedCacheRules.refusal(request: HTTPHeaderFields(request: request), response: headers) : nil
        if (directives.noStore && !directives.mustUnderstand) || sharedRefusal != nil {
            layer.remove([stored.fileName], wait: false)
        } else {
            layer.write(entry, as: stored.fileName, url: url, wait: false)
        }
        return refreshed
    }

    /// RFC 9111 §4.4: a non-error response to an unsafe request (POST, PUT, DELETE, ...) invalidates the
    /// stored responses of its URL and of same-origin `Location` / `Content-Location` URLs. Only their primary
    /// files are removed (a variant index gone makes its variants unreachable), so nothing is read here, and
    /// the removal is queued: the caller is on a network thread.
    func invalidate(after response: HTTPURLResponse, to request: URLRequest) {
        guard let url = request.url else { return }
        var targets = [url]
        for field in ["Location", "Content-Location"] {
            guard let value = response.value(forHTTPHeaderField: field), let target = URL(string: value, relativeTo: url)?.absoluteURL,
                  HTTPCacheKey.origin(of: target) == HTTPCacheKey.origin(of: url) else { continue }
            targets.append(target)
        }
        layer.remove(targets.compactMap { HTTPCacheKey.key(for: $0).map(HTTPCacheKey.fileName(for:)) }, wait: false)
    }
}

import Foundation

/// Which header fields a stored response keeps, drops, or takes from a later 304 (RFC 9111 §3.1, §3.2).
enum HTTPCacheHeaderRules {
    /// Never stored (RFC 9110 §7.6.1 hop-by-hop fields, and the proxy authentication fields RFC 9111 §3.1
    /// names), besides the fields a `Connection` header nominates.
    static let neverStored: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]
    /// Content codings the transports undo while receiving (libcurl decodes these and rejects any other):
    /// a stored body is never in them, so a `Content-Encoding` naming only these is not stored.
    static let decodedContentCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd"]

    /// The lower-cased names of the fields that must not be stored or taken from this message: the fixed
    /// list, the names its `Connection` field lists, and those of a qualified `no-cache="..."`.
    static func excludedNames(_ headers: HTTPHeaderFields) -> Set<String> {
        var names = neverStored
        if let connection = headers["Connection"] {
            for element in HTTPFieldList.elements(connection) where HTTPFieldList.isToken(element) {
                names.insert(element.lowercased())
            }
        }
        names.formUnion(CacheControlDirectives(headers["Cache-Control"]).noCacheFields)
        return names
    }

    /// Whether `Content-Encoding: value` describes a coding the transport already undid.
    static func isDecodedCoding(_ value: String) -> Bool {
        let codings = HTTPFieldList.elements(value).map { $0.lowercased() }
        return !codings.isEmpty && codings.allSatisfy { decodedContentCodings.contains($0) || $0 == "identity" }
            && codings.contains { $0 != "identity" }
    }

    /// The fields to store with a response. For a stored body, `Content-Length` becomes its length (the
    /// transport may have decoded it); `bodyLength` nil keeps the received value (a response stored without
    /// its body). A missing Date is added (RFC 9110 §6.6.1: a cache adds one when it stores a response).
    /// `Set-Cookie` is kept: the cache never replays it into cookie storage (see Docs/HTTPCache.md).
    static func fieldsForStorage(_ headers: HTTPHeaderFields, bodyLength: Int?, responseDate: Date) -> HTTPHeaderFields {
        let excluded = excludedNames(headers)
        var result = HTTPHeaderFields(headers.fields.filter { field in
            let name = field.name.lowercased()
            if excluded.contains(name) { return false }
            return !(name == "content-encoding" && isDecodedCoding(field.value))
        })
        if let bodyLength { result.set("Content-Length", String(bodyLength)) }
        if result["Date"] == nil { result.set("Date", HTTPDate.format(responseDate)) }
        return result
    }

    /// The stored fields updated from a 304 (RFC 9111 §3.2): every field of the 304 replaces the stored one,
    /// except Content-Length (it describes the stored body), fields never stored, a decoded Content-Encoding,
    /// and Content-Range. The stored Age is dropped unless the 304 carries one, and Date becomes the 304's
    /// (or its arrival time): the refreshed response's age starts from the 304.
    static func updatedHeaders(stored: HTTPHeaderFields, notModified: HTTPHeaderFields, responseDate: Date) -> HTTPHeaderFields {
        var result = stored
        let excluded = excludedNames(notModified)
        for field in notModified.fields {
            let name = field.name.lowercased()
            if excluded.contains(name) || name == "content-length" || name == "content-range" { continue }
            if name == "content-encoding", isDecodedCoding(field.value) { continue }
            result.set(field.name, field.value)
        }
        if notModified["Age"] == nil { result.set("Age", nil) }
        if notModified["Date"] == nil { result.set("Date", HTTPDate.format(responseDate)) }
        return result
    }
}

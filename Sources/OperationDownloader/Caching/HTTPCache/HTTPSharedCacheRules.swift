import Foundation

/// What changes when the cache is shared by many users (RFC 9111: a Redis cache serving a fleet), over the
/// private-cache rules of `HTTPFreshness`:
/// - `Cache-Control: private` responses are not stored (§5.2.2.7; the qualified form too, which is stricter);
/// - a response to a request with `Authorization` is stored only with `public`, `s-maxage` or
///   `must-revalidate` (§3.5);
/// - `s-maxage` replaces `max-age` and `Expires`, and like `proxy-revalidate` forbids serving it stale
///   (§5.2.2.10, §5.2.2.8).
/// The directory cache stays private: none of this applies to it.
enum HTTPSharedCacheRules {
    /// Why a shared cache must not store this response, or nil. `authenticated`: the request carried
    /// credentials the transport added (a challenge answered), which the request's fields do not show.
    static func refusal(request: HTTPHeaderFields, response: HTTPHeaderFields, authenticated: Bool = false) -> String? {
        let directives = SharedDirectives(response["Cache-Control"])
        if directives.isPrivate { return "Cache-Control: private in a shared cache" }
        if request["Authorization"] != nil || authenticated,
           !(directives.isPublic || directives.sMaxAge != nil || directives.mustRevalidate) {
            return "a response to an authorized request without public, s-maxage or must-revalidate"
        }
        return nil
    }

    /// `headers` as a shared cache's freshness rules read them: with `s-maxage`, a `Cache-Control` whose first
    /// members are `max-age=<s-maxage>` and `must-revalidate`; with `proxy-revalidate`, `must-revalidate` added.
    /// Unchanged otherwise (the stored and served fields are never rewritten: this is only for the rules).
    static func freshnessHeaders(_ headers: HTTPHeaderFields) -> HTTPHeaderFields {
        guard let value = headers["Cache-Control"] else { return headers }
        let directives = SharedDirectives(value)
        guard directives.sMaxAge != nil || directives.proxyRevalidate else { return headers }
        var members: [String] = []
        if let sMaxAge = directives.sMaxAge { members.append("max-age=\(Int(sMaxAge))") }
        members.append("must-revalidate")
        for element in HTTPFieldList.elements(value) {
            let name = HTTPFieldList.nameAndArgument(element)?.name
            if directives.sMaxAge != nil, name == "max-age" { continue }
            members.append(String(element))
        }
        var rewritten = headers
        rewritten.set("Cache-Control", members.joined(separator: ", "))
        return rewritten
    }

    /// The directives only a shared cache reads, and those it reads differently.
    private struct SharedDirectives {
        var isPrivate = false
        var isPublic = false
        var mustRevalidate = false
        var proxyRevalidate = false
        var sMaxAge: TimeInterval?

        init(_ value: String?) {
            guard let value else { return }
            var seen: Set<String> = []
            for element in HTTPFieldList.elements(value) {
                guard let (name, argument) = HTTPFieldList.nameAndArgument(element), seen.insert(name).inserted else { continue }
                switch name {
                case "private": isPrivate = true
                case "public": isPublic = true
                case "must-revalidate": mustRevalidate = true
                case "proxy-revalidate": proxyRevalidate = true
                case "s-maxage":
                    // An invalid argument is ignored (max-age and Expires then apply).
                    if let argument, let text = HTTPFieldList.tokenOrQuoted(argument) { sMaxAge = HTTPFieldList.deltaSeconds(text) }
                default: break
                }
            }
        }
    }
}

import Foundation

/// The Cache-Control directives this cache acts on (RFC 9111 §5.2), parsed from one header value.
///
/// A private cache: `s-maxage`, `public`, `private` and `proxy-revalidate` are read past and ignored.
struct CacheControlDirectives: Equatable, Sendable {
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    /// `max-age` in seconds; nil when absent.
    var maxAge: TimeInterval?
    /// `max-age` was present but not a non-negative integer: RFC 9111 §4.2.1 says treat the response as stale.
    var maxAgeInvalid = false

    init() {}

    /// Parses `value` (e.g. `max-age=60, must-revalidate`). Unknown directives are ignored, as the RFC requires.
    init(_ value: String?) {
        guard let value else { return }
        // Bounded: at most 64 directives are looked at; real headers carry a handful.
        for item in Self.split(value).prefix(64) {
            let (name, argument) = Self.nameAndArgument(item)
            switch name {
            case "no-store": noStore = true
            // Qualified no-cache ("no-cache=Set-Cookie") is treated as unqualified, which RFC 9111 §5.2.2.4 allows.
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "max-age":
                // Duplicate max-age directives make the response stale (RFC 9111 §4.2.1).
                if maxAge != nil { maxAgeInvalid = true }
                if let argument, !argument.isEmpty, argument.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                    // Delta-seconds larger than 2^31 are taken as 2^31 (RFC 9111 §1.2.2).
                    maxAge = argument.count > 10 ? 2_147_483_648 : min(TimeInterval(argument) ?? 2_147_483_648, 2_147_483_648)
                } else {
                    maxAgeInvalid = true
                }
            default: break
            }
        }
    }

    /// Splits on commas outside quoted strings.
    private static func split(_ value: String) -> [Substring] {
        var items: [Substring] = []
        var start = value.startIndex
        var inQuotes = false
        var index = value.startIndex
        while index < value.endIndex {
            let c = value[index]
            if c == "\"" { inQuotes.toggle() }
            if c == ",", !inQuotes {
                items.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        items.append(value[start..<value.endIndex])
        return items
    }

    private static func nameAndArgument(_ item: Substring) -> (String, String?) {
        let trimmed = item.trimmingCharacters(in: .whitespaces)
        guard let eq = trimmed.firstIndex(of: "=") else { return (trimmed.lowercased(), nil) }
        let name = trimmed[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
        var argument = trimmed[trimmed.index(after: eq)...].trimmingCharacters(in: .whitespaces)
        if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") {
            argument = String(argument.dropFirst().dropLast())
        }
        return (name, argument)
    }
}

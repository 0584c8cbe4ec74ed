import Foundation

/// A media type (RFC 9110 §8.3.1): `type/subtype *( OWS ";" OWS parameter )`, as in Content-Type and,
/// with `*` allowed, in the members of Accept.
struct HTTPMediaType: Equatable, Sendable {
    /// Lower-cased.
    let type: String
    /// Lower-cased.
    let subtype: String
    /// Parameters in order; names lower-cased, values unquoted (case kept).
    let parameters: [(name: String, value: String)]

    init?<S: StringProtocol>(_ value: S) {
        let parts = Self.splitParameters(Substring(value))
        guard let first = parts.first else { return nil }
        let essence = HTTPFieldList.trim(first)
        guard let slash = essence.firstIndex(of: "/") else { return nil }
        let type = essence[essence.startIndex..<slash]
        let subtype = essence[essence.index(after: slash)...]
        guard HTTPFieldList.isToken(type), HTTPFieldList.isToken(subtype) else { return nil }
        var parameters: [(name: String, value: String)] = []
        for part in parts.dropFirst() {
            let trimmed = HTTPFieldList.trim(part)
            if trimmed.isEmpty { continue }
            guard let (name, argument) = HTTPFieldList.nameAndArgument(trimmed), let argument,
                  let text = HTTPFieldList.tokenOrQuoted(argument) else { return nil }
            parameters.append((name, text))
        }
        self.type = type.lowercased()
        self.subtype = subtype.lowercased()
        self.parameters = parameters
    }

    /// `type/subtype;name=value...`: the same media type always gives the same text.
    var canonical: String {
        var text = type + "/" + subtype
        for parameter in parameters {
            let plain = HTTPFieldList.isToken(parameter.value)
            text += ";" + parameter.name + "=" + (plain ? parameter.value : Self.quoted(parameter.value))
        }
        return text
    }

    static func == (lhs: HTTPMediaType, rhs: HTTPMediaType) -> Bool {
        lhs.canonical == rhs.canonical
    }

    private static func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Splits at semicolons outside quoted strings (bounded like every list in the cache).
    private static func splitParameters(_ value: Substring) -> [Substring] {
        let utf8 = value.utf8
        var parts: [Substring] = []
        var start = utf8.startIndex
        var index = utf8.startIndex
        var inQuotes = false
        var escaped = false
        var scanned = 0
        while index < utf8.endIndex {
            scanned += 1
            guard scanned <= HTTPFieldList.maximumScannedBytes, parts.count < HTTPFieldList.maximumElements else { return [] }
            let byte = utf8[index]
            if escaped {
                escaped = false
            } else if inQuotes {
                if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inQuotes = false }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else if byte == UInt8(ascii: ";") {
                parts.append(value[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(value[start..<index])
        return parts
    }
}

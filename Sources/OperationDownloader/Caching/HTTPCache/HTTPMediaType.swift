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
        let (parts, truncated) = HTTPFieldList.split(Substring(value), at: UInt8(ascii: ";"))
        guard !truncated, let first = parts.first else { return nil }
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
}

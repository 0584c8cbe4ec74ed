import Foundation

/// The `Age` response field (RFC 9111 §5.1).
enum HTTPAge {
    /// The age in seconds, or nil when the field is to be ignored. Several `Age` lines arrive joined
    /// ("7200, 0"): the first value counts. Parameters after the number (`7200;foo=bar`, as structured fields
    /// write them) do not hide it; anything else but delta-seconds (negative, fractional, words) is ignored, as
    /// RFC 9111 asks; values past 2^31 count as 2^31.
    static func parse(_ value: String?) -> TimeInterval? {
        guard let value, let first = HTTPFieldList.elements(value).first else { return nil }
        let number = first.utf8.firstIndex(of: UInt8(ascii: ";")).map { first[first.startIndex..<$0] } ?? first
        return HTTPFieldList.deltaSeconds(number.trimmingCharacters(in: .whitespaces))
    }
}

/// The `Vary` response field (RFC 9110 §12.5.5).
enum HTTPVary: Equatable, Sendable {
    /// No field named: the response does not vary.
    case none
    /// The request fields named (lower-cased, each once, sorted).
    case fields([String])
    /// `*` (alone or among names), or a member that is not a field name: no later request can be known
    /// to match, so such a response is never stored.
    case any

    init(_ value: String?) {
        guard let value else {
            self = .none
            return
        }
        var names: Set<String> = []
        for element in HTTPFieldList.elements(value) {
            guard element != "*", HTTPFieldList.isToken(element) else {
                self = .any
                return
            }
            names.insert(element.lowercased())
        }
        self = names.isEmpty ? .none : .fields(names.sorted())
    }

    /// The request fields to match; empty for `.none` and `.any`.
    var fieldNames: [String] {
        if case .fields(let names) = self { return names }
        return []
    }

    /// The normalised value of request field `name` for comparing requests (RFC 9111 §4.1 allows
    /// normalising whitespace and the syntax of known fields): list members trimmed and joined with ","
    /// (so "1, 2", " 1,2 " and two lines "1" and "2" are equal); `Accept-Language` members lower-cased
    /// and sorted; `Accept` and `Content-Type` media types in their canonical form (lower-cased type,
    /// subtype and parameter names). Nil stays nil: an absent field only matches an absent field.
    static func normalisedValue(_ value: String?, field name: String) -> String? {
        guard let value else { return nil }
        var members = HTTPFieldList.elements(value).map { element -> String in
            switch name {
            case "accept-language":
                return String(element.filter { $0 != " " && $0 != "\t" }).lowercased()
            case "accept", "content-type":
                return HTTPMediaType(element)?.canonical ?? String(element)
            default:
                return String(element.filter { $0 != " " && $0 != "\t" })
            }
        }
        if name == "accept-language" { members.sort() }
        return members.joined(separator: ",")
    }
}

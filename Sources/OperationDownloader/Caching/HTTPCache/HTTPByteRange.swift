import Foundation

/// One byte range a request asks for (RFC 9110 §14.1.2): `first-last`, `first-` or `-suffix`.
///
/// The cache answers only a single range of bytes from storage; a `Range` field with another unit, several
/// ranges or any malformed member parses as nil and the request goes to the origin, which decides.
enum HTTPByteRange: Equatable, Sendable {
    /// Bytes `first` through `last` (nil: to the end).
    case from(Int, through: Int?)
    /// The last `length` bytes.
    case suffix(Int)

    /// Digits past this many overflow no real representation; a longer number is malformed here.
    private static let maximumDigits = 18

    /// The single byte range of a `Range` field value (`bytes=0-499`; the unit is case-insensitive, optional
    /// whitespace allowed around the spec).
    init?(rangeField value: String) {
        guard value.utf8.count <= 256, let equals = value.firstIndex(of: "=") else { return nil }
        guard value[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes" else { return nil }
        let spec = value[value.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let length = Self.number(last) else { return nil }
            self = .suffix(length)
            return
        }
        guard let start = Self.number(first) else { return nil }
        if last.isEmpty {
            self = .from(start, through: nil)
            return
        }
        // RFC 9110 §14.1.1: a last-pos below first-pos makes the range-spec invalid.
        guard let end = Self.number(last), end >= start else { return nil }
        self = .from(start, through: end)
    }

    /// The bytes this range selects in a representation of `length` bytes; nil when unsatisfiable (it starts
    /// at or past the end, or asks for the last zero bytes).
    func resolved(length: Int) -> ClosedRange<Int>? {
        guard length > 0 else { return nil }
        switch self {
        case .from(let first, let last):
            guard first < length else { return nil }
            return first...min(last ?? (length - 1), length - 1)
        case .suffix(let count):
            guard count > 0 else { return nil }
            return max(0, length - count)...(length - 1)
        }
    }

    static func number<S: StringProtocol>(_ text: S) -> Int? {
        guard !text.isEmpty, text.utf8.count <= maximumDigits, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}

/// A `Content-Range` of one byte range (RFC 9110 §14.4): `bytes first-last/complete`, the complete length
/// `*` when unknown. The unsatisfied form (`bytes */1234`) and other units parse as nil.
struct HTTPContentRange: Equatable, Sendable {
    let range: ClosedRange<Int>
    /// The representation's length; nil for `*`.
    let completeLength: Int?

    init(range: ClosedRange<Int>, completeLength: Int?) {
        self.range = range
        self.completeLength = completeLength
    }

    init?(_ value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.utf8.count <= 256, let space = trimmed.firstIndex(of: " "),
              trimmed[..<space].lowercased() == "bytes" else { return nil }
        let rest = trimmed[trimmed.index(after: space)...].trimmingCharacters(in: .whitespaces)
        guard let slash = rest.firstIndex(of: "/"), let dash = rest[..<slash].firstIndex(of: "-"),
              let first = HTTPByteRange.number(rest[..<dash]),
              let last = HTTPByteRange.number(rest[rest.index(after: dash)..<slash]), first <= last else { return nil }
        let complete = rest[rest.index(after: slash)...]
        if complete == "*" {
            completeLength = nil
        } else {
            // RFC 9110 §14.4: a last-pos at or past the complete length makes the field invalid.
            guard let length = HTTPByteRange.number(complete), last < length else { return nil }
            completeLength = length
        }
        range = first...last
    }

    /// The field value, e.g. `bytes 0-499/1234`.
    var fieldValue: String {
        "bytes \(range.lowerBound)-\(range.upperBound)/\(completeLength.map(String.init) ?? "*")"
    }
}

import Foundation

/// An entity-tag (RFC 9110 §8.8.3): `"opaque"` or `W/"opaque"`.
///
/// The cache sends stored ETags back as received (If-None-Match; an unquoted one in quotes), and compares them
/// to decide whether a 304 describes the stored response and whether a caller's own If-None-Match holds it.
struct HTTPEntityTag: Equatable, Sendable {
    /// The tag with its double quotes, e.g. `"abc"`.
    let opaqueTag: String
    let isWeak: Bool

    /// Parses one entity-tag: `[W/] DQUOTE *etagc DQUOTE` (etagc: `!`, `#`-`~`, obs-text). The weakness
    /// indicator is case-sensitive, as the grammar says.
    init?<S: StringProtocol>(_ value: S) {
        var bytes = Substring(value).utf8[...]
        var weak = false
        if bytes.starts(with: "W/".utf8) {
            weak = true
            bytes = bytes.dropFirst(2)
        }
        guard bytes.count >= 2, bytes.count <= HTTPFieldList.maximumScannedBytes, bytes.first == UInt8(ascii: "\""),
              bytes.last == UInt8(ascii: "\"") else { return nil }
        let inner = bytes.dropFirst().dropLast()
        guard inner.allSatisfy({ $0 == 0x21 || ($0 >= 0x23 && $0 != 0x7F) }) else { return nil }
        opaqueTag = String(decoding: bytes, as: UTF8.self)
        isWeak = weak
    }

    /// Also a bare `opaque` without its quotes (servers and clients send them), read as `"opaque"`.
    init?<S: StringProtocol>(lenient value: S) {
        if let strict = HTTPEntityTag(value) {
            self = strict
        } else if let quoted = Self.quotedBareTag(value), let tag = HTTPEntityTag(quoted) {
            self = tag
        } else {
            return nil
        }
    }

    /// `value` (an ETag, or an If-None-Match list) with each bare tag in quotes (`abc` → `"abc"`); valid tags,
    /// `*` and members that are no tag at all are left as they are.
    static func quotingBareTags(_ value: String) -> String {
        let elements = HTTPFieldList.elements(value)
        guard elements.contains(where: { quotedBareTag($0) != nil }) else { return value }
        return elements.map { quotedBareTag($0) ?? String($0) }.joined(separator: ", ")
    }

    /// `"value"` when `value` is a bare opaque tag: etagc characters only, no quote, not `*`, no `W/` prefix.
    private static func quotedBareTag<S: StringProtocol>(_ value: S) -> String? {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= HTTPFieldList.maximumScannedBytes, value != "*", !value.hasPrefix("W/"),
              utf8.allSatisfy({ $0 == 0x21 || ($0 >= 0x23 && $0 != 0x7F && $0 != UInt8(ascii: ",")) }) else { return nil }
        return "\"" + String(value) + "\""
    }

    /// Strong comparison: both strong and the same opaque tag.
    func strongMatches(_ other: HTTPEntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag == other.opaqueTag
    }

    /// Weak comparison: the same opaque tag, either may be weak.
    func weakMatches(_ other: HTTPEntityTag) -> Bool {
        opaqueTag == other.opaqueTag
    }

    /// The members of an `If-None-Match` / `If-Match` value: `*` (nil: any), or the valid entity-tags
    /// in order (malformed members are skipped).
    static func list(_ value: String) -> [HTTPEntityTag]? {
        let elements = HTTPFieldList.elements(value)
        if elements.count == 1, elements[0] == "*" { return nil }
        return elements.compactMap { HTTPEntityTag(lenient: $0) }
    }
}

import Foundation

/// An entity-tag (RFC 9110 §8.8.3): `"opaque"` or `W/"opaque"`.
///
/// The cache sends stored ETags back exactly as received (If-None-Match), and compares them only to decide
/// whether a 304 describes the stored response.
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
        return elements.compactMap(HTTPEntityTag.init)
    }
}

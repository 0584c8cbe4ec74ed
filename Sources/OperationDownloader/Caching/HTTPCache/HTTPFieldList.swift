import Foundation

/// RFC 9110 §5.6 building blocks, shared by the header parsers of the cache: comma-separated lists that
/// respect quoted strings, tokens, quoted strings and delta-seconds.
///
/// Foundation only (no networking types), so that the libFuzzer targets in Fuzz/ compile these files alone.
/// Every function works on UTF-8 bytes in one pass: the work is linear in the input, and inputs are cut to
/// `maximumScannedBytes` and `maximumElements`, so no header value can make a lookup slow.
enum HTTPFieldList {
    /// Bytes of one field value that are looked at; real values are far shorter (libcurl caps a header
    /// line at 100 KB).
    static let maximumScannedBytes = 16 * 1024
    /// List elements that are looked at.
    static let maximumElements = 128
    /// delta-seconds past 2^31 are taken as 2^31 (RFC 9111 §1.2.2).
    static let deltaSecondsLimit: TimeInterval = 2_147_483_648

    /// The elements of a list-valued field (RFC 9110 §5.6.1): split at commas outside quoted strings,
    /// each trimmed of spaces and tabs, empty elements dropped.
    static func elements(_ value: String) -> [Substring] {
        split(value[...], at: UInt8(ascii: ",")).parts.map(trim).filter { !$0.isEmpty }
    }

    /// `value` split at `separator` bytes outside quoted strings (with backslash escapes). Scanning stops at
    /// `maximumScannedBytes` or `maximumElements` parts: `truncated` then says so, and the part being read
    /// when it stopped is left out rather than misread.
    static func split(_ value: Substring, at separator: UInt8) -> (parts: [Substring], truncated: Bool) {
        let utf8 = value.utf8
        var parts: [Substring] = []
        var start = utf8.startIndex
        var index = utf8.startIndex
        var inQuotes = false
        var escaped = false
        var scanned = 0
        while index < utf8.endIndex {
            guard scanned < maximumScannedBytes, parts.count < maximumElements else { return (parts, true) }
            let byte = utf8[index]
            if escaped {
                escaped = false
            } else if inQuotes {
                if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inQuotes = false }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else if byte == separator {
                parts.append(value[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
            scanned += 1
        }
        guard parts.count < maximumElements else { return (parts, true) }
        parts.append(value[start..<index])
        return (parts, false)
    }

    /// `value` without leading and trailing spaces and tabs (OWS).
    static func trim(_ value: Substring) -> Substring {
        let utf8 = value.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end, isWhitespace(utf8[start]) { start = utf8.index(after: start) }
        while end > start, isWhitespace(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        return value[start..<end]
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Whether `value` is a non-empty token.
    static func isToken<S: StringProtocol>(_ value: S) -> Bool {
        !value.utf8.isEmpty && value.utf8.allSatisfy(isTokenCharacter)
    }

    /// The content of a quoted-string (escapes undone), or nil when `value` is not exactly one
    /// quoted-string.
    static func unquoted(_ value: Substring) -> String? {
        let bytes = Array(value.utf8.prefix(maximumScannedBytes + 1))
        guard bytes.count >= 2, bytes.count <= maximumScannedBytes, bytes.first == UInt8(ascii: "\""),
              bytes.last == UInt8(ascii: "\"") else { return nil }
        var content: [UInt8] = []
        var index = 1
        while index < bytes.count - 1 {
            var byte = bytes[index]
            if byte == UInt8(ascii: "\"") { return nil }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count - 1 else { return nil }
                byte = bytes[index]
            }
            // qdtext / quoted-pair: HTAB, SP, visible ASCII, obs-text; never other controls.
            guard byte == 0x09 || byte >= 0x20, byte != 0x7F else { return nil }
            content.append(byte)
            index += 1
        }
        return String(decoding: content, as: UTF8.self)
    }

    /// A token or quoted-string argument, as its text; nil when it is neither.
    static func tokenOrQuoted(_ value: Substring) -> String? {
        if value.utf8.first == UInt8(ascii: "\"") { return unquoted(value) }
        return isToken(value) ? String(value) : nil
    }

    /// delta-seconds (RFC 9111 §1.2.2): 1*DIGIT, leading zeros allowed, values past 2^31 taken as 2^31.
    /// nil for anything else (signs, fractions, spaces, letters).
    static func deltaSeconds<S: StringProtocol>(_ value: S) -> TimeInterval? {
        var result: TimeInterval = 0
        var digits = 0
        for byte in value.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            digits += 1
            if digits > maximumScannedBytes { return nil }
            if result < deltaSecondsLimit { result = result * 10 + TimeInterval(byte - UInt8(ascii: "0")) }
        }
        guard digits > 0 else { return nil }
        return min(result, deltaSecondsLimit)
    }

    /// delta-seconds read as caches on the web read them: the leading digits of `value`, whatever follows them
    /// (`3600.5`, `3600a`: 3600). nil without a leading digit (`-1`, `a3600`, `'3600'`, empty).
    static func leadingDeltaSeconds<S: StringProtocol>(_ value: S) -> TimeInterval? {
        let utf8 = value.utf8
        let end = utf8.firstIndex { $0 < UInt8(ascii: "0") || $0 > UInt8(ascii: "9") } ?? utf8.endIndex
        return deltaSeconds(value[value.startIndex..<end])
    }

    /// Splits a list element `name[=argument]` at the first `=` (no whitespace allowed around it, as in the
    /// Cache-Control grammar). The name is lower-cased; nil when it is not a token.
    static func nameAndArgument(_ element: Substring) -> (name: String, argument: Substring?)? {
        let utf8 = element.utf8
        guard let equals = utf8.firstIndex(of: UInt8(ascii: "=")) else {
            return isToken(element) ? (element.lowercased(), nil) : nil
        }
        let name = element[element.startIndex..<equals]
        guard isToken(name) else { return nil }
        return (name.lowercased(), element[utf8.index(after: equals)...])
    }
}

import Foundation

/// A JSON value that keeps the insertion order of object keys, so latest.json reads in section order and
/// diffs between runs stay small.
indirect enum JSONValue {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// A number rounded to `digits` significant decimals, or null when absent or not finite.
    static func rounded(_ value: Double?, digits: Int = 3) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        let scale = pow(10.0, Double(digits))
        return .number((value * scale).rounded() / scale)
    }

    /// Serialised with two-space indentation.
    func serialized(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent)
        let inner = String(repeating: "  ", count: indent + 1)
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n):
            if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
            return String(n)
        case .string(let s): return Self.quote(s)
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[\n" + items.map { inner + $0.serialized(indent: indent + 1) }.joined(separator: ",\n") + "\n\(pad)]"
        case .object(let pairs):
            if pairs.isEmpty { return "{}" }
            return "{\n" + pairs.map { inner + Self.quote($0.0) + ": " + $0.1.serialized(indent: indent + 1) }
                .joined(separator: ",\n") + "\n\(pad)}"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

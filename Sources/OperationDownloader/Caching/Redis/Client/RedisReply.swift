import Foundation

/// One reply from Redis, as `RESPReader` read it. RESP3's extra types are folded into these: a map is an array of
/// alternating keys and values, a set an array, a boolean an integer (1 or 0), a double and a big number their
/// text as a string, a verbatim string its text without the format, a blob error an error.
enum RedisReply: Equatable, Sendable {
    case string(Data)
    case status(String)
    /// An error reply ("WRONGPASS ...", "OOM ..."): the command failed, the connection is fine.
    case error(String)
    case integer(Int)
    case null
    case array([RedisReply])
    /// A RESP3 out-of-band message (never the answer to a command: the connection skips it).
    case push([RedisReply])

    var data: Data? {
        if case .string(let data) = self { return data }
        return nil
    }

    var isOK: Bool {
        if case .status(let status) = self { return status == "OK" }
        return false
    }

    var errorMessage: String? {
        if case .error(let message) = self { return message }
        return nil
    }

    /// The error's code, its first word ("OOM", "READONLY", "MOVED"), or nil for a reply that is not an error.
    var errorCode: Substring? {
        guard case .error(let message) = self else { return nil }
        return message.prefix { $0 != " " }
    }

    /// Elements of an array (nil for any other reply).
    var elements: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// A string or status as text, an integer's digits.
    var text: String? {
        switch self {
        case .string(let data): return String(decoding: data, as: UTF8.self)
        case .status(let text): return text
        case .integer(let value): return String(value)
        default: return nil
        }
    }
}

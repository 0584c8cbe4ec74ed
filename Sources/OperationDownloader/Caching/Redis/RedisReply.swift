import CHiredis
import Foundation

/// One RESP2 reply, copied out of hiredis's reply object.
enum RedisReply: Equatable, Sendable {
    case string(Data)
    case status(String)
    /// An error reply ("WRONGPASS ...", "OOM ..."): the command failed, the connection is fine.
    case error(String)
    case integer(Int)
    case null
    case array([RedisReply])

    /// Arrays nested deeper than this are not copied (the client never sends a command that returns them).
    static let maximumDepth = 8

    /// Copies the hiredis reply at `pointer` (any ABI, through the shim).
    init(hiredis pointer: UnsafeRawPointer, depth: Int = 0) {
        var view = chiredis_reply_view()
        chiredis_reply_view_of(pointer, &view)
        func text() -> String {
            guard let str = view.str else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: str, count: view.len), as: UTF8.self)
        }
        switch Int(view.type) {
        case CHIREDIS_REPLY_STRING:
            self = .string(view.str.map { Data(bytes: $0, count: view.len) } ?? Data())
        case CHIREDIS_REPLY_STATUS:
            self = .status(text())
        case CHIREDIS_REPLY_ERROR:
            self = .error(text())
        case CHIREDIS_REPLY_INTEGER:
            self = .integer(Int(truncatingIfNeeded: view.integer))
        case CHIREDIS_REPLY_ARRAY where depth < Self.maximumDepth:
            var elements: [RedisReply] = []
            elements.reserveCapacity(min(view.elements, 4096))
            for index in 0..<view.elements {
                guard let element = chiredis_reply_element(pointer, index) else { break }
                elements.append(RedisReply(hiredis: element, depth: depth + 1))
            }
            self = .array(elements)
        case CHIREDIS_REPLY_NIL:
            self = .null
        default:
            self = .error("unexpected reply type \(view.type)")
        }
    }

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
}

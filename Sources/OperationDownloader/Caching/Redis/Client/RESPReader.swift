import Foundation

/// How large one reply may be. Every length a reply announces is checked against these before anything is
/// allocated or waited for, so a server (or anything answering on its port) cannot make the client hold more
/// than a request expects: `*2147483647` and `$200000000` are refused from their first line.
struct RESPLimits: Sendable, Equatable {
    /// Bytes of one bulk string (also a verbatim string or a blob error).
    var maximumBulkLength: Int
    /// Elements of all the arrays, maps and sets of one reply together.
    var maximumElements: Int
    /// Aggregates nested deeper than this are refused.
    var maximumDepth: Int
    /// Bytes of one line: a status, an error, a number, a length.
    var maximumLineLength: Int

    /// For replies the client does not size itself: small values, statuses, short arrays.
    static let standard = RESPLimits(maximumBulkLength: 1 << 20, maximumElements: 65_536, maximumDepth: 8, maximumLineLength: 64 * 1024)

    /// These limits with bulk strings of up to `bytes`.
    func bulk(_ bytes: Int) -> RESPLimits {
        var limits = self
        limits.maximumBulkLength = max(0, bytes)
        return limits
    }
}

/// Why bytes are not a reply the client accepts (the connection is then closed: what follows cannot be trusted).
enum RESPReaderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not RESP at all.
    case malformed(String)
    /// RESP, but over a limit of `RESPLimits`.
    case tooLarge(String)

    var description: String {
        switch self {
        case .malformed(let reason): return "not a Redis reply (\(reason))"
        case .tooLarge(let reason): return "a reply larger than allowed (\(reason))"
        }
    }
}

/// Reads one RESP2 or RESP3 reply from the front of a buffer (Redis's protocol: redis.io/docs/reference/protocol-spec).
/// Stateless: the caller keeps the bytes received so far and calls again with more when told `needMore`, which
/// names how many bytes the reply needs at least (so a large bulk string is not parsed again for every packet).
enum RESPReader {
    enum Outcome: Equatable {
        /// A whole reply, `length` bytes long.
        case reply(RedisReply, length: Int)
        /// The bytes end inside a reply, which needs at least `atLeast` bytes in all.
        case needMore(atLeast: Int)
    }

    static func read(_ bytes: UnsafeRawBufferPointer, limits: RESPLimits) throws(RESPReaderError) -> Outcome {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .needMore(atLeast: 1) }
        var cursor = Cursor(base: base.assumingMemoryBound(to: UInt8.self), count: bytes.count, limits: limits)
        do {
            let reply = try cursor.value(depth: 0)
            return .reply(reply, length: cursor.position)
        } catch {
            switch error {
            case .incomplete(let atLeast): return .needMore(atLeast: atLeast)
            case .malformed(let reason): throw .malformed(reason)
            case .tooLarge(let reason): throw .tooLarge(reason)
            }
        }
    }

    /// Reads `data` whole: the reply and its length, nil when it ends inside one.
    static func read(_ data: Data, limits: RESPLimits = .standard) throws(RESPReaderError) -> (RedisReply, Int)? {
        let outcome = try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            Result { () throws(RESPReaderError) -> Outcome in try read(buffer, limits: limits) }
        }.get()
        if case .reply(let reply, let length) = outcome { return (reply, length) }
        return nil
    }
}

private enum Stop: Error {
    case incomplete(Int)
    case malformed(String)
    case tooLarge(String)
}

private let cr: UInt8 = 13, lf: UInt8 = 10

/// One pass over the buffer; `elementsLeft` is the reply's remaining element budget.
private struct Cursor {
    let base: UnsafePointer<UInt8>
    let count: Int
    let limits: RESPLimits
    var position = 0
    var elementsLeft: Int

    init(base: UnsafePointer<UInt8>, count: Int, limits: RESPLimits) {
        self.base = base
        self.count = count
        self.limits = limits
        self.elementsLeft = max(0, limits.maximumElements)
    }

    mutating func value(depth: Int) throws(Stop) -> RedisReply {
        guard position < count else { throw .incomplete(position + 1) }
        let type = base[position]
        position += 1
        switch type {
        case UInt8(ascii: "+"): return .status(text(try line()))
        case UInt8(ascii: "-"): return .error(text(try line()))
        case UInt8(ascii: ":"): return .integer(try integer(try line()))
        case UInt8(ascii: "$"):
            guard let payload = try bulk() else { return .null }
            return .string(Data(bytes: base + payload.lowerBound, count: payload.count))
        case UInt8(ascii: "*"), UInt8(ascii: "~"):
            guard let elements = try aggregate(depth: depth, perEntry: 1) else { return .null }
            return .array(elements)
        case UInt8(ascii: "%"):
            guard let elements = try aggregate(depth: depth, perEntry: 2) else { return .null }
            return .array(elements)
        case UInt8(ascii: ">"):
            guard let elements = try aggregate(depth: depth, perEntry: 1) else { return .null }
            return .push(elements)
        case UInt8(ascii: "|"):
            // Attributes describe the reply that follows them: read and dropped.
            _ = try aggregate(depth: depth, perEntry: 2)
            return try value(depth: depth)
        case UInt8(ascii: "_"):
            guard try line().isEmpty else { throw .malformed("a null with a value") }
            return .null
        case UInt8(ascii: "#"):
            let content = try line()
            guard content.count == 1 else { throw .malformed("a boolean that is not t or f") }
            switch base[content.lowerBound] {
            case UInt8(ascii: "t"): return .integer(1)
            case UInt8(ascii: "f"): return .integer(0)
            default: throw .malformed("a boolean that is not t or f")
            }
        case UInt8(ascii: ","), UInt8(ascii: "("):
            let content = try line()
            guard !content.isEmpty else { throw .malformed("an empty number") }
            return .string(Data(bytes: base + content.lowerBound, count: content.count))
        case UInt8(ascii: "!"):
            guard let payload = try bulk() else { throw .malformed("a null blob error") }
            return .error(text(payload))
        case UInt8(ascii: "="):
            guard let payload = try bulk() else { throw .malformed("a null verbatim string") }
            // "txt:" or "mkd:", then the text.
            guard payload.count >= 4, base[payload.lowerBound + 3] == UInt8(ascii: ":") else {
                throw .malformed("a verbatim string without its format")
            }
            return .string(Data(bytes: base + payload.lowerBound + 4, count: payload.count - 4))
        default:
            throw .malformed("unknown reply type byte \(type)")
        }
    }

    /// The content of the line at `position` (without CRLF); moves past it.
    mutating func line() throws(Stop) -> Range<Int> {
        let start = position
        let window = min(count - start, limits.maximumLineLength + 2)
        guard window > 0 else { throw .incomplete(start + 1) }
        guard let found = memchr(base + start, Int32(cr), window) else {
            if window < limits.maximumLineLength + 2 { throw .incomplete(count + 1) }
            throw .tooLarge("a line over \(limits.maximumLineLength) bytes")
        }
        let end = start + (UnsafeRawPointer(found) - UnsafeRawPointer(base + start))
        guard end - start <= limits.maximumLineLength else { throw .tooLarge("a line over \(limits.maximumLineLength) bytes") }
        guard end + 1 < count else { throw .incomplete(end + 2) }
        guard base[end + 1] == lf else { throw .malformed("CR without LF") }
        position = end + 2
        return start..<end
    }

    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self)
    }

    /// A decimal integer filling `range`: an optional minus, 1 to 19 digits, within Int64.
    func integer(_ range: Range<Int>) throws(Stop) -> Int {
        var index = range.lowerBound
        let negative = index < range.upperBound && base[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let digits = range.upperBound - index
        guard digits >= 1, digits <= 19 else { throw .malformed("an integer of \(digits) digits") }
        var value = 0
        while index < range.upperBound {
            let digit = Int(base[index]) - 48
            guard digit >= 0, digit <= 9 else { throw .malformed("a non-digit in an integer") }
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(digit)
            guard !overflowA, !overflowB else { throw .malformed("an integer out of range") }
            value = sum
            index += 1
        }
        return negative ? -value : value
    }

    /// A length-prefixed payload (`$`, `!`, `=`): its range in the buffer, nil for RESP2's null (-1).
    mutating func bulk() throws(Stop) -> Range<Int>? {
        let length = try integer(try line())
        if length == -1 { return nil }
        guard length >= 0 else { throw .malformed("a negative length") }
        guard length <= limits.maximumBulkLength else {
            throw .tooLarge("a string of \(length) bytes, over \(limits.maximumBulkLength)")
        }
        let start = position
        let (end, overflow) = start.addingReportingOverflow(length)
        guard !overflow, end <= Int.max - 2 else { throw .tooLarge("a string past the address space") }
        guard end + 2 <= count else { throw .incomplete(end + 2) }
        guard base[end] == cr, base[end + 1] == lf else { throw .malformed("a string not ended by CRLF") }
        position = end + 2
        return start..<end
    }

    /// The elements of an aggregate of `perEntry` values per announced entry, nil for RESP2's null (-1).
    mutating func aggregate(depth: Int, perEntry: Int) throws(Stop) -> [RedisReply]? {
        let entries = try integer(try line())
        if entries == -1 { return nil }
        guard entries >= 0 else { throw .malformed("a negative element count") }
        guard entries <= elementsLeft / perEntry else {
            throw .tooLarge("\(entries) elements, over the \(limits.maximumElements) a reply may have")
        }
        guard depth < limits.maximumDepth else { throw .tooLarge("aggregates nested over \(limits.maximumDepth) deep") }
        let total = entries * perEntry
        elementsLeft -= total
        var elements: [RedisReply] = []
        // Each element takes 3 bytes at least: reserve for what the bytes at hand could hold, not what was announced.
        elements.reserveCapacity(min(total, (count - position) / 3 + 1))
        for _ in 0..<total { elements.append(try value(depth: depth + 1)) }
        return elements
    }
}

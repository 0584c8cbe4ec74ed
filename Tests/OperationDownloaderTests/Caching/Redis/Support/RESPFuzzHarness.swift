// The fuzz harness of the Redis client's RESP reader, shared by the libFuzzer binary (Fuzz/Sources/RESPFuzzer.swift;
// Fuzz/run.sh compiles this file with RESPReader.swift and RedisReply.swift into one module) and
// RESPFuzzRegressionTests, so a stored finding is replayed through exactly the calls that found it.
import Foundation
#if canImport(OperationDownloader)
@testable import OperationDownloader
#endif

/// Small limits, so that the fuzzer spends its time on the grammar and on the limits themselves.
let respFuzzLimits = RESPLimits(maximumBulkLength: 4096, maximumElements: 1024, maximumDepth: 8, maximumLineLength: 1024)

/// Runs `data` (bytes a server might send) through the reader and returns the invariants it broke (empty: none):
/// - a reply is never longer than the bytes, and has at most `maximumElements` elements;
/// - every prefix of a reply's bytes needs more (never an error, never another reply), and says how many bytes it
///   needs at least, no more than the reply has;
/// - a reply written back as RESP reads back the same.
/// A trap inside the reader (overflow, bounds) is a finding too.
func respFuzzOne(_ data: Data) -> [String] {
    var broken: [String] = []
    func check(_ holds: Bool, _ invariant: @autoclosure () -> String) { if !holds { broken.append(invariant()) } }
    // An error (not RESP, over a limit) or a reply that needs more bytes: nothing more to check.
    guard let (reply, length) = try? RESPReader.read(data, limits: respFuzzLimits) else { return [] }
    check(length > 0 && length <= data.count, "reply length \(length) of \(data.count) bytes")
    check(respElementCount(reply) <= respFuzzLimits.maximumElements, "\(respElementCount(reply)) elements")
    // Prefixes: every one for short replies, a deterministic sample for long ones.
    let step = max(1, length / 64)
    for cut in stride(from: 0, to: length, by: step) {
        let outcome = try? data.prefix(cut).withUnsafeBytes { try RESPReader.read($0, limits: respFuzzLimits) }
        guard case .needMore(let atLeast)? = outcome else {
            broken.append("the prefix of \(cut) bytes read as \(outcome.map { "\($0)" } ?? "an error")")
            continue
        }
        check(atLeast > cut && atLeast <= length, "the prefix of \(cut) bytes needs \(atLeast) (the reply has \(length))")
    }
    let written = respEncode(reply)
    let reread = try? RESPReader.read(written, limits: RESPLimits(maximumBulkLength: 1 << 20, maximumElements: 1 << 16,
                                                                 maximumDepth: 16, maximumLineLength: 1 << 16))
    check(reread?.0 == reply && reread?.1 == written.count, "written back as \(written.count) bytes, it reads as \(String(describing: reread))")
    return broken
}

/// Elements in all the aggregates of `reply`.
func respElementCount(_ reply: RedisReply) -> Int {
    switch reply {
    case .array(let elements), .push(let elements): return elements.count + elements.reduce(0) { $0 + respElementCount($1) }
    default: return 0
    }
}

/// `reply` as RESP (RESP2 types, `>` for a push): what a server would send for it.
func respEncode(_ reply: RedisReply) -> Data {
    switch reply {
    case .string(let data): return Data("$\(data.count)\r\n".utf8) + data + Data("\r\n".utf8)
    case .status(let text): return Data("+\(text)\r\n".utf8)
    case .error(let text): return Data("!\(Data(text.utf8).count)\r\n\(text)\r\n".utf8)
    case .integer(let value): return Data(":\(value)\r\n".utf8)
    case .null: return Data("_\r\n".utf8)
    case .array(let elements): return elements.reduce(Data("*\(elements.count)\r\n".utf8)) { $0 + respEncode($1) }
    case .push(let elements): return elements.reduce(Data(">\(elements.count)\r\n".utf8)) { $0 + respEncode($1) }
    }
}

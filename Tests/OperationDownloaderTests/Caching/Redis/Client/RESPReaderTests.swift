import Foundation
import Testing
@testable import OperationDownloader

/// The RESP2/RESP3 reader on bytes: every type, replies split anywhere, and the limits, which refuse a reply
/// from the length it announces — before anything is allocated or waited for.
@Suite struct RESPReaderTests {
    func read(_ text: String, limits: RESPLimits = .standard) throws -> (RedisReply, Int)? {
        try RESPReader.read(Data(text.utf8), limits: limits)
    }

    @Test func readsEveryRESP2Type() throws {
        #expect(try read("+OK\r\n")?.0 == .status("OK"))
        #expect(try read("-ERR wrong\r\n")?.0 == .error("ERR wrong"))
        #expect(try read(":-42\r\n")?.0 == .integer(-42))
        #expect(try read("$5\r\nhello\r\n")?.0 == .string(Data("hello".utf8)))
        #expect(try read("$0\r\n\r\n")?.0 == .string(Data()))
        #expect(try read("$-1\r\n")?.0 == .null)
        #expect(try read("*-1\r\n")?.0 == .null)
        #expect(try read("*2\r\n$1\r\na\r\n*1\r\n:1\r\n")?.0 == .array([.string(Data("a".utf8)), .array([.integer(1)])]))
        // A binary value, CR and LF inside it included.
        #expect(try read("$4\r\n\r\n\0\u{1}\r\n")?.0 == .string(Data([13, 10, 0, 1])))
        // The length read is the reply's only: what follows is the next reply's.
        #expect(try read("+OK\r\n:1\r\n")?.1 == 5)
    }

    @Test func readsRESP3Types() throws {
        #expect(try read("_\r\n")?.0 == .null)
        #expect(try read("#t\r\n")?.0 == .integer(1))
        #expect(try read("#f\r\n")?.0 == .integer(0))
        #expect(try read(",3.25\r\n")?.0 == .string(Data("3.25".utf8)))
        #expect(try read("(3492890328409238509324850943850943825024385\r\n")?.0
            == .string(Data("3492890328409238509324850943850943825024385".utf8)))
        #expect(try read("!9\r\nERR boom!\r\n")?.0 == .error("ERR boom!"))
        #expect(try read("=8\r\ntxt:Some\r\n")?.0 == .string(Data("Some".utf8)))
        #expect(try read("%1\r\n+k\r\n:1\r\n")?.0 == .array([.status("k"), .integer(1)]))
        #expect(try read("~2\r\n:1\r\n:2\r\n")?.0 == .array([.integer(1), .integer(2)]))
        #expect(try read(">2\r\n+invalidate\r\n*0\r\n")?.0 == .push([.status("invalidate"), .array([])]))
        // An attribute describes the reply after it, which is what is returned.
        #expect(try read("|1\r\n+ttl\r\n:3600\r\n:7\r\n")?.0 == .integer(7))
    }

    /// A reply cut anywhere needs more bytes, never a wrong answer; `needMore` says how many at least.
    @Test func everyCutNeedsMore() throws {
        let whole = Data("*3\r\n$5\r\nhello\r\n%1\r\n+a\r\n:12\r\n-ERR x\r\n".utf8)
        for cut in 0..<whole.count {
            let outcome = try whole.prefix(cut).withUnsafeBytes { bytes in
                try RESPReader.read(bytes, limits: .standard)
            }
            guard case .needMore(let atLeast) = outcome else {
                Issue.record("a cut at \(cut) read as a reply")
                continue
            }
            #expect(atLeast > cut && atLeast <= whole.count, "cut \(cut): needs \(atLeast)")
        }
        #expect(try RESPReader.read(whole)?.1 == whole.count)
        // A large string: the length known from its header, so the bytes are not parsed again meanwhile.
        let outcome = try Data("$1000\r\nab".utf8).withUnsafeBytes { try RESPReader.read($0, limits: .standard) }
        #expect(outcome == .needMore(atLeast: 7 + 1000 + 2))
    }

    /// The attacks of issue 39: a huge array or string is refused from its first line (no allocation of the
    /// announced size, no wait for its bytes).
    @Test func limitsRefuseFromTheAnnouncedLength() throws {
        let limits = RESPLimits.standard.bulk(1000)
        #expect(throws: RESPReaderError.self) { try read("*2147483647\r\n", limits: limits) }
        #expect(throws: RESPReaderError.self) { try read("$200000000\r\n", limits: limits) }
        #expect(throws: RESPReaderError.self) { try read("%2147483647\r\n", limits: limits) }
        // The element budget is the reply's, over all its arrays.
        var small = RESPLimits.standard
        small.maximumElements = 3
        #expect(try read("*3\r\n:1\r\n:2\r\n:3\r\n", limits: small)?.0 == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(throws: RESPReaderError.self) { try read("*2\r\n*2\r\n:1\r\n:2\r\n:3\r\n", limits: small) }
        // Nesting.
        #expect(throws: RESPReaderError.self) { try read(String(repeating: "*1\r\n", count: 9) + ":1\r\n") }
        // A line that never ends.
        var lines = RESPLimits.standard
        lines.maximumLineLength = 16
        #expect(throws: RESPReaderError.self) { try read("+" + String(repeating: "a", count: 40), limits: lines) }
        #expect(try read("+" + String(repeating: "a", count: 10), limits: lines) == nil)
    }

    @Test(arguments: ["?\r\n", ":12a\r\n", ":99999999999999999999\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "+OK\rX", "#x\r\n",
                      "_1\r\n", "*-5\r\n", "=3\r\ntxt\r\n", ":\r\n", "$\r\n"])
    func malformedRepliesAreRefused(text: String) {
        #expect(throws: RESPReaderError.self) { try read(text) }
    }

    @Test func writerEncodesCommandsAsArraysOfBulkStrings() throws {
        let buffer = RESPWriter.encode([RedisCommand.make("SET", "k", Data([0, 13, 10]), "PX", 100), RedisCommand.make("PING")])
        let bytes = withExtendedLifetime(buffer) { Data(buffer.bytes) }  // `bytes` points into the buffer's memory
        #expect(String(decoding: bytes, as: UTF8.self) == "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n\0\r\n\r\n$2\r\nPX\r\n$3\r\n100\r\n*1\r\n$4\r\nPING\r\n")
        // What the writer writes, the reader reads back (as a client's command is an array of strings).
        let (reply, length) = try #require(try RESPReader.read(bytes))
        #expect(length == bytes.count - 14)
        #expect(reply == .array([.string(Data("SET".utf8)), .string(Data("k".utf8)), .string(Data([0, 13, 10])),
                                 .string(Data("PX".utf8)), .string(Data("100".utf8))]))
    }
}

import Foundation
import Testing
@testable import OperationDownloader

/// Replays every input the RESP fuzzer ever flagged (Tests/Support/RESPFuzzRegressions/resp/, written by
/// Fuzz/run.sh) through the fuzzer's own harness (Caching/Redis/Support/RESPFuzzHarness.swift), and runs
/// deterministic mutations of real replies through it, so the reader's invariants hold in every `swift test`.
@Suite struct RESPFuzzRegressionTests {
    static let directory = FixtureServer.supportDirectory.appendingPathComponent("RESPFuzzRegressions/resp")

    static let findings: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        .filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted()

    @Test(arguments: findings)
    func findingKeepsTheInvariants(_ file: String) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(file))
        #expect(respFuzzOne(data).isEmpty, "\(file): \(respFuzzOne(data))")
    }

    /// The replies the client meets, with bytes flipped, inserted and cut.
    static let seeds = [
        "+OK\r\n", "-ERR wrong\r\n", ":1\r\n", "$5\r\nhello\r\n", "$-1\r\n", "*-1\r\n", "*2\r\n$1\r\na\r\n:7\r\n",
        "*3\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$4\r\nabcd\r\n", "%1\r\n+k\r\n~2\r\n#t\r\n,1.5\r\n",
        "|1\r\n+a\r\n:1\r\n>2\r\n+m\r\n_\r\n", "=8\r\ntxt:abcd\r\n", "!3\r\nERR\r\n", "(12345678901234567890\r\n",
    ]

    @Test func mutatedRepliesKeepTheInvariants() {
        var random = HTTPCacheTestRandom(seed: 0x2e5b)
        let specials = Array("*$%~>|_#,(!=+-:\r\n0123456789".utf8)
        for seed in Self.seeds {
            let base = Array(seed.utf8)
            for _ in 0..<400 {
                var bytes = base
                random.mutate(&bytes, specials: specials)
                let broken = respFuzzOne(Data(bytes))
                #expect(broken.isEmpty, "\(bytes): \(broken)")
            }
        }
    }
}

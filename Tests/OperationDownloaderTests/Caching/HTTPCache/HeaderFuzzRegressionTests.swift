import Foundation
import Testing
@testable import OperationDownloader

/// Replays every input the header fuzzers ever flagged (Tests/Support/HeaderFuzzRegressions/<target>/, written
/// by Fuzz/run.sh) through the fuzzer's own harness (Support/HeaderFuzzHarness.swift), and runs a few thousand
/// deterministic mutations of typical values through every target, so the harness's invariants hold in every
/// `swift test` and not only when someone fuzzes.
@Suite struct HeaderFuzzRegressionTests {
    static let directory = FixtureServer.supportDirectory.appendingPathComponent("HeaderFuzzRegressions")

    struct Finding: Sendable, CustomTestStringConvertible {
        let target: HeaderFuzzTarget
        let file: String
        var testDescription: String { "\(target.rawValue)/\(file)" }
        var data: Data {
            get throws { try Data(contentsOf: HeaderFuzzRegressionTests.directory.appendingPathComponent("\(target.rawValue)/\(file)")) }
        }
    }

    static let findings: [Finding] = HeaderFuzzTarget.allCases.flatMap { target -> [Finding] in
        let folder = directory.appendingPathComponent(target.rawValue)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return files.sorted().filter { !$0.hasPrefix(".") && $0 != "README.md" }.map { Finding(target: target, file: $0) }
    }

    /// Each finding in a child process (an exit test): an input that traps again fails its own case instead of
    /// ending the whole test run.
    @Test(arguments: findings)
    func findingNoLongerTraps(_ finding: Finding) async throws {
        let data = try finding.data
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [data = data as Data, target = finding.target.rawValue as String] in
            let broken = HeaderFuzzTarget(rawValue: target).map { headerFuzzOne(data, target: $0) } ?? ["unknown target \(target)"]
            if !broken.isEmpty {
                FileHandle.standardError.write(Data(("broken: " + broken.joined(separator: "; ") + "\n").utf8))
                exit(1)
            }
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("\(finding.testDescription): \(String(decoding: result.standardErrorContent.suffix(2000), as: UTF8.self))")
        }
    }

    /// Findings are kept once fixed (Fuzz/README.md): an empty folder means the replay above checks nothing.
    @Test func thereAreFindingsToReplay() {
        #expect(!Self.findings.isEmpty, "no header fuzz findings in \(Self.directory.path)")
    }

    static let seeds = [
        "max-age=3600, no-cache=\"Set-Cookie\"", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994", "7200, 0", "Accept, *", "W/\"a\", \"b\"", "image/png; charset=\"a\\\"b\"",
        "bytes=0-499", "bytes=-5", "bytes 4-9/10",
        "Cache-Control: max-age=60\nAge: 30\nDate: Sun, 06 Nov 1994 08:49:37 GMT\nConnection: a\na: 1",
    ]

    /// Byte flips, insertions of the grammar's special characters and truncations of the seeds: every target
    /// returns for each (the harness checks the round-trip invariants).
    @Test(arguments: HeaderFuzzTarget.allCases)
    func mutatedValuesKeepTheInvariants(_ target: HeaderFuzzTarget) {
        var random = HTTPCacheTestRandom(seed: 0x5eed)
        let specials = Array("\",;=\\/ \t*-:W0123456789GMT\u{80}\u{ff}".utf8)
        for seed in Self.seeds {
            let base = Array(seed.utf8)
            for _ in 0..<300 {
                var bytes = base
                random.mutate(&bytes, specials: specials)
                let broken = headerFuzzOne(Data(bytes), target: target)
                #expect(broken.isEmpty, "\(target.rawValue) \(bytes): \(broken)")
            }
        }
    }
}

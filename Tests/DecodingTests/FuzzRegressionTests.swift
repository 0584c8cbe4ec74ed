import Foundation
import Testing
import Decoding

/// Replays every input the fuzzers ever flagged (Tests/Support/FuzzRegressions/<target>/, written by
/// Fuzz/run.sh) through the fuzzer's own harness (Support/FuzzHarness.swift): one-shot decode, then the chunked
/// incremental decode. A fixed finding must now end with a value or a thrown error, never a trap.
@Suite(.serialized) struct FuzzRegressionTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/FuzzRegressions")

    /// (target, file) for every stored finding.
    static let findings: [Finding] = {
        let manager = FileManager.default
        guard let targets = try? manager.contentsOfDirectory(atPath: directory.path) else { return [] }
        return targets.sorted().flatMap { target -> [Finding] in
            let folder = directory.appendingPathComponent(target)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue,
                  let files = try? manager.contentsOfDirectory(atPath: folder.path) else { return [] }
            return files.sorted().filter { !$0.hasPrefix(".") && $0 != "README.md" }.map { Finding(target: target, file: $0) }
        }
    }()

    struct Finding: Sendable, CustomTestStringConvertible {
        let target: String
        let file: String
        var testDescription: String { "\(target)/\(file)" }
        var data: Data {
            get throws { try Data(contentsOf: FuzzRegressionTests.directory.appendingPathComponent("\(target)/\(file)")) }
        }
    }

    @Test(arguments: findings)
    func findingNoLongerTraps(_ finding: Finding) throws {
        let data = try finding.data
        // An unknown folder name replays through every coder, as the fuzzer's "any" target does.
        fuzzOne(data, hash: fuzzHash(data), target: FuzzTarget(rawValue: finding.target) ?? .any)
    }

    /// The stored findings are real files the replay can read (the folder may legitimately be empty).
    @Test func findingsAreReadable() throws {
        for finding in Self.findings { #expect(try !finding.data.isEmpty || finding.file.hasPrefix("empty")) }
    }
}

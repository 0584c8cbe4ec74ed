import Foundation
import Testing
import TestRequirements
import Decoding

/// Replays every input the fuzzers ever flagged (Tests/Support/FuzzRegressions/<target>/, written by
/// Fuzz/run.sh) through the fuzzer's own harness (Support/FuzzHarness.swift): one-shot decode, then the chunked
/// incremental decode. A fixed finding must now end with a value or a thrown error: no trap, no broken
/// invariant, and (under the address sanitizer, as CI runs this suite) no leak.
@Suite(.serialized, .offThePool) struct FuzzRegressionTests {
    // DecoderFixtures.directory is Tests/Support/DecoderFixtures.
    static let directory = DecoderFixtures.directory.deletingLastPathComponent().appendingPathComponent("FuzzRegressions")

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
        var path: String { FuzzRegressionTests.directory.appendingPathComponent("\(target)/\(file)").path }

        /// What the target's coder loads with dlopen: without it the replay would prove nothing.
        var requirements: [Requirement] {
            switch FuzzTarget(rawValue: target) {
            case .webp: [.libwebp]
            case .heif: [.libheif, .lcms2]
            case .tiff: [.libtiff]
            case .icc: [.lcms2]
            default: []
            }
        }
    }

    /// Each finding in a child process (an exit test): an input that traps again fails its own case instead of
    /// ending the whole test run, and a leak fails it under LeakSanitizer, which checks at the child's exit.
    @Test(arguments: findings)
    func findingNoLongerTraps(_ finding: Finding) async throws {
        for requirement in finding.requirements { try Requirement.check(requirement) }
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [path = finding.path as String, target = finding.target as String] in
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            // An unknown folder name replays through every coder, as the fuzzer's "any" target does.
            let broken = fuzzOne(data, hash: fuzzHash(data), target: FuzzTarget(rawValue: target) ?? .any)
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
    @Test func thereAreFindingsToReplay() throws {
        #expect(!Self.findings.isEmpty, "no fuzz findings in \(Self.directory.path)")
        for finding in Self.findings {
            #expect(FuzzTarget(rawValue: finding.target) != nil, "\(finding.target)/ is not a fuzz target")
            #expect(try !Data(contentsOf: URL(fileURLWithPath: finding.path)).isEmpty || finding.file.hasPrefix("empty"))
        }
    }
}

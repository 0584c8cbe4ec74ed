import Foundation
import TestRequirements

/// The built `imagedl` run as a child process (a member of a fleet): arguments in, its `--json` records out.
final class ImagedlProcess: @unchecked Sendable {  // immutable after init; Process and Pipe are thread-safe
    /// The `imagedl` of this build, beside the test bundle.
    static var executable: URL? {
        let bundle = Bundle.main.bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("imagedl") }
            + [FixtureServer.packageRoot.appendingPathComponent(".build/debug/imagedl")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Outcome: @unchecked Sendable {  // immutable; `records` holds JSONSerialization's values only
        let status: Int32
        /// One JSON object per URL (`--json`), in the order they ended.
        let records: [[String: Any]]
        let standardError: String
    }

    let process: Process
    private let drain: PipeDrain

    /// Starts `imagedl --json <arguments>`, with `environment` added to this process's.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        guard let executable = Self.executable else { throw RedisServerFailure(message: "imagedl is not built") }
        let process = Process()
        let output = Pipe()
        let errors = Pipe()
        process.executableURL = executable
        process.arguments = ["--json"] + arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try ChildProcesses.run(process)
        // Read as it comes (a full pipe would block the child), on a thread with poll(2): PipeDrain says why not
        // with readabilityHandler.
        self.process = process
        drain = PipeDrain(output: output.fileHandleForReading, errors: errors.fileHandleForReading) {
            process.isRunning
        }
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// Waits for the process to end (on a thread of its own, off the cooperative pool and dispatch's workers) and
    /// parses its records.
    func finish() async -> Outcome {
        await offCooperativePool { [self] in
            process.waitUntilExit()
            let (out, err) = drain.wait()
            let records = String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }
            return Outcome(status: process.terminationStatus, records: records, standardError: String(decoding: err, as: UTF8.self))
        }
    }
}

extension Requirement {
    /// The `imagedl` executable of this build (`swift build` makes it).
    static let imagedl = Requirement("imagedl", install: "swift build (the package's own command-line tool)") {
        ImagedlProcess.executable == nil ? "no imagedl beside the test bundle" : nil
    }
}

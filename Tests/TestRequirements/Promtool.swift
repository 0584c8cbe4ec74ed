import Foundation

/// `promtool check metrics` over an exposition: its exit status and what it printed (lint problems).
public enum Promtool {
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
    }

    public static func check(_ exposition: String) throws -> Outcome {
        guard let path = Requirement.promtoolPath else { throw RequirementMissing(message: "no promtool (OD_PROMTOOL or PATH)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try ChildProcesses.run(process)
        // Written from another thread: a large exposition fills the pipe before promtool's output is read.
        let handle = input.fileHandleForWriting
        let bytes = Data(exposition.utf8)
        let writer = Thread {
            handle.write(bytes)
            try? handle.close()
        }
        writer.start()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: printed, as: UTF8.self))
    }
}

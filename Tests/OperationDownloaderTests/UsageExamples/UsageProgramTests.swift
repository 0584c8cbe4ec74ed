import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestRequirements

/// Docs/Usage.md's complete command-line program (Tests/UsageProgram), built as its own executable and run against
/// the fixture server: thumbnails written, failures reported on standard error, the exit status, and Ctrl-C
/// cancelling the downloads in flight.
@Suite(.requires(.usageProgram)) struct UsageProgramTests {
    let server = FixtureServer.shared

    /// The program running with `arguments`.
    final class Run: @unchecked Sendable {  // immutable after init; Process and PipeDrain are thread-safe
        let process = Process()
        private let drain: PipeDrain

        init(_ arguments: [String]) throws {
            let output = Pipe(), errors = Pipe()
            process.executableURL = UsageProgram.executable
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = output
            process.standardError = errors
            try ChildProcesses.run(process)
            let process = self.process
            drain = PipeDrain(output: output.fileHandleForReading, errors: errors.fileHandleForReading) { process.isRunning }
        }

        /// Waits for the exit (off the cooperative pool): the status and what it wrote to standard error.
        func finish() async -> (status: Int32, errors: String) {
            await offCooperativePool { [self] in
                process.waitUntilExit()
                return (process.terminationStatus, String(decoding: drain.wait().errors, as: UTF8.self))
            }
        }
    }

    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("thumbnailer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func writesEveryThumbnailAndReportsEachFailure() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tag = newTag()
        let run = try Run([folder.path] + [
            "/images/baseline.jpg", "/images/image.png", "/images/animated.gif", "/status/404", "/html",
            "/flaky/\(tag)/progressive.jpg?fail=1",
        ].map { server.url($0 + ($0.contains("?") ? "&" : "?") + "tag=\(tag)").absoluteString })
        let (status, errors) = await run.finish()
        #expect(status == 1, "a URL failed: \(errors)")
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(written == ["baseline.png", "image.png", "animated.png", "progressive.png"], "\(errors)")
        #expect(errors.contains("404: unacceptable HTTP status 404 (Not Found)"), "\(errors)")
        #expect(errors.contains("html: bad image data: not an image"), "\(errors)")
        #expect(errors.contains("image: 160x120 from network"), "\(errors)")
        #expect(errors.contains("image: 100%"), "progress on standard error: \(errors)")
        let thumbnail = try Data(contentsOf: folder.appendingPathComponent("baseline.png"))
        #expect(thumbnail.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func everyThumbnailWrittenExitsZero() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (status, errors) = try await Run([folder.path, server.url("/images/tiny.png?tag=\(newTag())").absoluteString]).finish()
        #expect(status == 0, "\(errors)")
        let (usage, message) = try await Run([folder.path]).finish()
        #expect(usage == 2 && message.hasPrefix("usage: thumbnailer"))
    }

    /// Ctrl-C while downloads are held at the server: the program cancels them (the server sees the client go)
    /// and exits 130.
    @Test func ctrlCCancelsWhatIsInFlightAndExits130() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tag = newTag()
        let holds = (0..<2).map { _ in UUID().uuidString }
        let run = try Run([folder.path] + holds.map { server.url("/hold/\($0)/image.png?max=100&tag=\(tag)").absoluteString })
        _ = await server.awaitRequests(tag: tag, count: 2)
        kill(run.process.processIdentifier, SIGINT)
        let (status, errors) = await run.finish()
        #expect(status == 130 && errors.contains("interrupted"), "\(errors)")
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(log.allSatisfy { $0.aborted == true }, "the held requests were cancelled, not answered")
        for hold in holds { server.release(hold) }
    }
}

/// Where the program's executable of this build is.
enum UsageProgram {
    /// Beside the test bundle, or in the package's debug build folder.
    static var executable: URL? {
        let bundle = Bundle.main.bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("UsageThumbnailer") }
            + [UsageDocSnippetTests.root.appendingPathComponent(".build/debug/UsageThumbnailer")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}

extension Requirement {
    /// The usage program's executable of this build (`swift build` makes it).
    static let usageProgram = Requirement("UsageThumbnailer", install: "swift build (the package's usage example program)") {
        UsageProgram.executable == nil ? "no UsageThumbnailer beside the test bundle" : nil
    }
}

import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `imagedl URL...` end to end against the tool's own loopback server: success, 404, timeout, and Ctrl-C.
@Suite(.offThePool) struct DownloadCommandTests {
    private static func server() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer(routes: [
            "/bounce.gif": .init(body: try DemoSamples.data(named: "bounce.gif"), contentType: "image/gif"),
            "/photo.png": .init(body: try DemoSamples.data(named: "photo.png"), contentType: "image/png",
                                drip: (chunkSize: 30_000, interval: 0.05)),
            // 10 bytes, then silence far longer than the 1 s timeout.
            "/stall.jpg": .init(body: Data(repeating: 0xFF, count: 20), contentType: "image/jpeg",
                                drip: (chunkSize: 10, interval: 10)),
        ])
    }

    @Test func successNotFoundAndTimeoutAsJSON() throws {
        let server = try Self.server()
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = ["/bounce.gif", "/missing.png", "/stall.jpg", "/photo.png"].map(server.url)
        options.timeout = 1
        options.json = true
        let lines = LineCollector()
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: lines.add))
        let status = command.run()
        #expect(status == .failure)  // the 404 and the timeout

        let objects = try lines.lines.map { line -> [String: Any] in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(objects.count == 4)
        var byURL: [String: [String: Any]] = [:]
        for object in objects { byURL[try #require(object["url"] as? String)] = object }

        let missing = try #require(byURL[server.url("/missing.png").absoluteString])
        #expect(missing["status"] as? String == "error")
        #expect((missing["error"] as? String)?.hasPrefix("HTTP 404") == true)

        let stall = try #require(byURL[server.url("/stall.jpg").absoluteString])
        #expect(stall["status"] as? String == "error")
        #expect((stall["error"] as? String)?.contains("timed out") == true, "\(stall["error"] ?? "")")

        for (path, format, width) in [("/bounce.gif", "gif", 96), ("/photo.png", "png", 240)] {
            let object = try #require(byURL[server.url(path).absoluteString])
            let decodable = ImageCodersManager.shared.coders.contains { $0.canDecode((try? DemoSamples.data(named: String(path.dropFirst()))) ?? Data()) }
            if decodable {
                #expect(object["status"] as? String == "ok", "\(path): \(object["error"] ?? "")")
                #expect(object["format"] as? String == format)
                #expect(object["width"] as? Int == width)
                #expect(object["bytes"] as? Int == (try DemoSamples.data(named: String(path.dropFirst()))).count)
            } else {
                #expect(object["status"] as? String == "error")
            }
        }
        let records = command.results
        #expect(records.allSatisfy { $0.isFinished })
    }

    @Test func writesOriginalBytesToOutputFolder() throws {
        let server = try Self.server()
        defer { server.stop() }
        let gif = try DemoSamples.data(named: "bounce.gif")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        options.urls = [server.url("/bounce.gif")]
        options.outputDirectory = folder.path
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: { _ in }))
        #expect(command.run() == .success)
        #expect(try Data(contentsOf: folder.appendingPathComponent("bounce.gif")) == gif)
    }

    @Test func writesDecodedPNGsWithPNGOption() throws {
        let server = try Self.server()
        defer { server.stop() }
        let coders = ImageCodersManager.shared
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-png-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        options.urls = [server.url("/bounce.gif"), server.url("/photo.png")]
        options.outputDirectory = folder.path
        options.writePNG = true
        options.thumbnail = PixelSize(width: 48, height: 48)
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: { _ in }))
        #expect(command.run() == .success)
        let gifPNG = try coders.decode(try Data(contentsOf: folder.appendingPathComponent("bounce.png")))
        #expect(gifPNG.format == .png && gifPNG.width == 48 && gifPNG.height == 32)
        // photo.png would be written as photo.png too: same name, PNG content, thumbnail size.
        let photo = try coders.decode(try Data(contentsOf: folder.appendingPathComponent("photo.png")))
        #expect(photo.width == 48 && photo.height == 36)
    }

    /// The built `imagedl` beside the test bundle, when this build has it.
    private static var executable: URL? {
        let candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
            .map { $0.appendingPathComponent("imagedl") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    @Test func ctrlCCancelsAndExits130() async throws {
        guard let executable = Self.executable else { Issue.record("no exe \(Bundle.main.bundleURL.path)"); return }
        let server = try Self.server()
        defer { server.stop() }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--timeout", "60", server.url("/stall.jpg").absoluteString]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        // Wait (bounded) until the download has started, then interrupt.
        let handle = output.fileHandleForReading
        var seen = Data()
        for _ in 0..<200 where !String(decoding: seen, as: UTF8.self).contains("started") {
            seen += handle.availableData
        }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        seen += handle.readDataToEndOfFile()
        let text = String(decoding: seen, as: UTF8.self)
        #expect(process.terminationStatus == 130)
        #expect(text.contains("interrupted"))
        #expect(text.contains("cancelled"))
    }
}

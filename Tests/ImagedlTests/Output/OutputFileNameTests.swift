import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `--output` with `--json`: each object names the exact file written, and names never collide (same last path
/// component, query strings, no extension, `--png` conversions, unsafe characters, files already there).
@Suite(.offThePool) struct OutputFileNameTests {
    private static func jsonObjects(_ lines: [String]) throws -> [[String: Any]] {
        try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func everyDownloadGetsItsOwnFileAndTheJSONNamesIt() throws {
        let baseline = try DemoSamples.data(named: "baseline.jpg")
        let progressive = try DemoSamples.data(named: "progressive.jpg")
        let gif = try DemoSamples.data(named: "bounce.gif")
        let png = try DemoSamples.data(named: "photo.png")
        let server = try LoopbackHTTPServer(routes: [
            "/a/img.jpg": .init(body: baseline, contentType: "image/jpeg"),
            "/b/img.jpg": .init(body: progressive, contentType: "image/jpeg"),
            "/q.gif": .init(body: gif, contentType: "image/gif"),
            "/photo": .init(body: png, contentType: "image/png"),
            "/we%20ird%3Cname%3E.gif": .init(body: gif, contentType: "image/gif"),
            "/%2E%2E%2Fescape.gif": .init(body: gif, contentType: "image/gif"),
            "/": .init(body: gif, contentType: "image/gif"),
        ])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // A file from an earlier run is never replaced.
        try Data("keep me".utf8).write(to: folder.appendingPathComponent("img.jpg"))

        var options = DownloadOptions()
        options.urls = [
            "/a/img.jpg", "/b/img.jpg", "/q.gif?x=1", "/q.gif?x=2", "/photo", "/we%20ird%3Cname%3E.gif",
            "/%2E%2E%2Fescape.gif", "/",
        ].map(server.url)
        options.outputDirectory = folder.path
        options.json = true
        let lines = LineCollector()
        #expect(DownloadCommand(options: options, reporter: JSONReporter(write: lines.add)).run() == .success)

        let objects = try Self.jsonObjects(lines.lines)
        #expect(objects.count == 8)
        var files: [String: String] = [:]  // URL → path
        for object in objects {
            let url = try #require(object["url"] as? String)
            let path = try #require(object["file"] as? String, "no file for \(url)")
            files[url] = path
            // Inside the folder, a plain safe name.
            #expect((path as NSString).deletingLastPathComponent == folder.path, "\(path)")
            let name = (path as NSString).lastPathComponent
            #expect(name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) } && !name.hasPrefix("."), "\(name)")
        }
        #expect(Set(files.values).count == 8, "two downloads share a file: \(files)")
        func served(_ path: String) -> Data { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }
        func file(_ path: String) -> String { files[server.url(path).absoluteString] ?? "?" }
        // Each file holds what its own URL served.
        #expect(served(file("/a/img.jpg")) == baseline)
        #expect(served(file("/b/img.jpg")) == progressive)
        #expect(Set([file("/a/img.jpg"), file("/b/img.jpg")].map { ($0 as NSString).lastPathComponent }) == ["img-2.jpg", "img-3.jpg"])
        #expect(try String(contentsOf: folder.appendingPathComponent("img.jpg"), encoding: .utf8) == "keep me")
        #expect(Set([file("/q.gif?x=1"), file("/q.gif?x=2")].map { ($0 as NSString).lastPathComponent }) == ["q.gif", "q-2.gif"])
        #expect((file("/photo") as NSString).lastPathComponent == "photo.png")
        #expect(served(file("/photo")) == png)
        #expect((file("/we%20ird%3Cname%3E.gif") as NSString).lastPathComponent == "we_ird_name_.gif")
        #expect((file("/%2E%2E%2Fescape.gif") as NSString).lastPathComponent == "_escape.gif")
        #expect((file("/") as NSString).lastPathComponent == "127.0.0.1.gif")
        // Nothing else was written.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 9)
    }

    @Test func pngConversionsNeverCollideWithRealPNGs() throws {
        let gif = try DemoSamples.data(named: "bounce.gif")
        let png = try DemoSamples.data(named: "photo.png")
        let server = try LoopbackHTTPServer(routes: [
            "/pic.gif": .init(body: gif, contentType: "image/gif"),
            "/pic.png": .init(body: png, contentType: "image/png"),
        ])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-png-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        options.urls = [server.url("/pic.gif"), server.url("/pic.png")]
        options.outputDirectory = folder.path + "/"  // a trailing slash gives no double slash
        options.writePNG = true
        options.json = true
        let lines = LineCollector()
        #expect(DownloadCommand(options: options, reporter: JSONReporter(write: lines.add)).run() == .success)
        let objects = try Self.jsonObjects(lines.lines)
        let paths = objects.compactMap { $0["file"] as? String }
        #expect(Set(paths.map { ($0 as NSString).lastPathComponent }) == ["pic.png", "pic-2.png"])
        #expect(paths.allSatisfy { $0.hasPrefix(folder.path + "/pic") })
        for object in objects {
            let path = try #require(object["file"] as? String)
            let decoded = try ImageCodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(decoded.format == .png)
            #expect(decoded.width == object["width"] as? Int)
        }
    }

    @Test func theWriterNumbersNamesAndNeverOverwrites() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-writer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var writer = OutputFileWriter(folder: folder.path)
        var paths: [String] = []
        for i in 0..<5 { paths.append(try writer.write(Data([UInt8(i)]), stem: "a", extension: "jpg")) }
        #expect(paths.map { ($0 as NSString).lastPathComponent } == ["a.jpg", "a-2.jpg", "a-3.jpg", "a-4.jpg", "a-5.jpg"])
        // A second writer (another run) starts over but skips every taken name.
        var again = OutputFileWriter(folder: folder.path)
        #expect((try again.write(Data([9]), stem: "a", extension: "jpg") as NSString).lastPathComponent == "a-6.jpg")
        for (i, path) in paths.enumerated() { #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([UInt8(i)])) }
        // A folder that does not exist is an error naming the file.
        var missing = OutputFileWriter(folder: folder.appendingPathComponent("absent").path)
        #expect(throws: OutputFileWriter.WriteError.self) { try missing.write(Data([1]), stem: "x", extension: "png") }
    }
}

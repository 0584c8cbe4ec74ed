import Decoding
import Foundation
import Testing
import TestRequirements
@testable import ImagedlCore

@Suite(.offThePool) struct DecodeJSONTests {
    static let keys = ["file", "format", "width", "height", "frames", "duration", "loop_count", "orientation", "color",
                       "color_detail", "icc_profile_bytes", "incomplete", "error"]

    /// Runs `imagedl decode --json` in process and parses every line.
    private func decodeJSON(_ paths: [String]) throws -> (ExitCode, [[String: Any]], [String]) {
        var options = DecodeOptions()
        options.paths = paths
        options.json = true
        let lines = LineCollector()
        let status = DecodeCommand(options: options, emit: lines.add, emitError: { _ in }).run()
        let objects = try lines.lines.map { line -> [String: Any] in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not an object: \(line)")
        }
        return (status, objects, lines.lines)
    }

    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func nonImageGivesOneObjectWithErrorAndExit1() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = folder.appendingPathComponent("page.jpg")
        try Data("<html>not found</html>".utf8).write(to: text)
        let (status, objects, lines) = try decodeJSON([text.path, folder.appendingPathComponent("missing").path])
        #expect(status == .failure)
        #expect(objects.count == 2)
        for (object, line) in zip(objects, lines) {
            // Keys in the documented order, nothing else.
            #expect(Set(object.keys) == Set(Self.keys))
            let positions = Self.keys.compactMap { line.range(of: "\"\($0)\":")?.lowerBound }
            #expect(positions == positions.sorted() && positions.count == Self.keys.count)
            #expect(object["width"] is NSNull && object["frames"] is NSNull && object["orientation"] is NSNull)
            #expect((object["error"] as? String)?.isEmpty == false)
        }
        #expect(objects[0]["format"] is NSNull)
        #expect(objects[0]["file"] as? String == text.path)
        #expect((objects[1]["error"] as? String) == "cannot read file: no such file")
    }

    @Test func sampleImagesDecodeOrReportOneError() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["progressive.jpg", "photo.png", "bounce.gif"] {
            try DemoSamples.data(named: name).write(to: folder.appendingPathComponent(name))
        }
        let (_, objects, _) = try decodeJSON([folder.path])
        #expect(objects.count == 3)
        let expected: [String: (String, Int, Int, Int)] = [
            "bounce.gif": ("gif", 96, 64, 12), "photo.png": ("png", 240, 180, 1), "progressive.jpg": ("jpeg", 640, 480, 1),
        ]
        for object in objects {
            let file = try #require(object["file"] as? String)
            let name = URL(fileURLWithPath: file).lastPathComponent
            let (format, width, height, frames) = try #require(expected[name])
            #expect(object["format"] as? String == format)
            #expect(object["error"] is NSNull, "\(name): \(object["error"] ?? "")")
            #expect(object["width"] as? Int == width && object["height"] as? Int == height)
            #expect(object["frames"] as? Int == frames)
            #expect(object["orientation"] as? Int == 1)
        }
    }

    /// A file cut short: the plain line says "incomplete", and so does the JSON (issue 20, point 7); a whole
    /// file is `false`, a file nothing could be decoded from `null`.
    @Test func aTruncatedFileIsIncompleteInTheJSONToo() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let jpeg = try DemoSamples.data(named: "baseline.jpg")
        let cut = folder.appendingPathComponent("cut.jpg"), whole = folder.appendingPathComponent("whole.jpg")
        let text = folder.appendingPathComponent("text.jpg")
        try jpeg.prefix(jpeg.count * 6 / 10).write(to: cut)
        try jpeg.write(to: whole)
        try Data("not an image".utf8).write(to: text)
        let (_, objects, _) = try decodeJSON([cut.path, whole.path, text.path])
        #expect(objects.count == 3)
        #expect(objects[0]["incomplete"] as? Bool == true, "\(objects[0])")
        #expect(objects[0]["error"] is NSNull && (objects[0]["width"] as? Int ?? 0) > 0)
        #expect(objects[1]["incomplete"] as? Bool == false, "\(objects[1])")
        #expect(objects[2]["incomplete"] is NSNull, "\(objects[2])")

        var options = DecodeOptions()
        options.paths = [cut.path]
        let lines = LineCollector()
        _ = DecodeCommand(options: options, emit: lines.add, emitError: { _ in }).run()
        #expect(lines.lines.first?.contains("incomplete") == true, "\(lines.lines)")
    }

    @Test(.requires(.corpus)) func wholeCorpusGivesValidJSONForEveryFile() throws {
        let root = try #require(SharedCorpus.root)
        let (_, objects, lines) = try decodeJSON([root.path])
        #expect(objects.count == lines.count)
        #expect(objects.count > 200)
        for object in objects { #expect(Set(object.keys) == Set(Self.keys)) }
    }

    @Test func humanLinesAndRGBADump() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let png = folder.appendingPathComponent("photo.png")
        try DemoSamples.data(named: "photo.png").write(to: png)
        var options = DecodeOptions()
        options.paths = [png.path]
        options.rgbaOutput = folder.appendingPathComponent("photo.rgba").path
        let lines = LineCollector()
        let status = DecodeCommand(options: options, emit: lines.add, emitError: { _ in }).run()
        #expect(lines.lines.count == 1)
        let decodes = ImageCodersManager.shared.coders.contains { $0.canDecode((try? Data(contentsOf: png)) ?? Data()) }
        if decodes {
            #expect(status == .success)
            #expect(lines.lines[0].hasPrefix("\(png.path): png 240x180, 1 frame, orientation 1 (up), decoded in "))
            let dump = try Data(contentsOf: folder.appendingPathComponent("photo.rgba"))
            #expect(dump.count == 240 * 180 * 4)
        } else {
            #expect(status == .failure)
            #expect(lines.lines[0].hasPrefix("\(png.path): error: no png decoder"))
        }
    }

    @Test func jsonStringsAreEscaped() throws {
        let value = JSONValue.object([("s", .string("a\"b\\c\nd\u{1}é")), ("n", .null), ("d", .double(.nan))])
        let text = value.serialized()
        #expect(text == #"{"s":"a\"b\\c\nd\u0001é","n":null,"d":null}"#)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(parsed["s"] as? String == "a\"b\\c\nd\u{1}é")
    }
}

/// Collects output lines from a command (its closures are called synchronously on the test's thread).
final class LineCollector: @unchecked Sendable {  // `lock` guards `storage`
    private let lock = NSLock()
    private var storage: [String] = []
    var lines: [String] { lock.withLock { storage } }
    func add(_ line: String) { lock.withLock { storage.append(line) } }
}

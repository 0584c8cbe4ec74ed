import Decoding
import Foundation
@testable import ImagedlCore
import TestRequirements
import Testing

/// `imagedl decode` and `imagedl thumbnail` on JPEG XL files (Tests/Support/DecoderFixtures/jxl): the JSON names
/// the format, frames, duration and loop count; `--rgba --frame N` writes frame N; thumbnails are made from them.
@Suite(.requires(.libjxl), .offThePool) struct JXLCommandTests {
    static let fixtures = TestFolders.support.appendingPathComponent("DecoderFixtures/jxl")

    private static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-jxl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func decode(_ options: DecodeOptions) throws -> (ExitCode, [String], [[String: Any]]) {
        let lines = LineCollector()
        let status = DecodeCommand(options: options, emit: lines.add, emitError: lines.add).run()
        let objects = lines.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return (status, lines.lines, objects)
    }

    @Test func decodeJSONReportsFormatFramesDurationAndLoops() throws {
        var options = DecodeOptions()
        options.paths = ["animation-3-loops.jxl", "still-lossy.jxl"].map { Self.fixtures.appendingPathComponent($0).path }
        options.json = true
        let (status, _, objects) = try Self.decode(options)
        #expect(status == .success && objects.count == 2)
        let animation = objects[0], still = objects[1]
        #expect(animation["format"] as? String == "jxl" && still["format"] as? String == "jxl")
        #expect(animation["width"] as? Int == 48 && animation["height"] as? Int == 32)
        // 100 + 40 + 10 ms, the last shown for 100 ms (the browser rule).
        #expect(animation["frames"] as? Int == 3 && animation["duration"] as? Double == 0.24)
        #expect(animation["loop_count"] as? Int == 3 && animation["incomplete"] as? Bool == false)
        #expect(still["frames"] as? Int == 1 && still["duration"] is NSNull && still["loop_count"] is NSNull)
    }

    @Test func rgbaWritesTheRequestedFrame() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = Self.fixtures.appendingPathComponent("animation-3-loops.jxl")
        let animation = try #require(try ImageCodersManager.shared.decode(try Data(contentsOf: file)).animation)
        for frame in [2, 0, 1] {
            var options = DecodeOptions()
            options.paths = [file.path]
            options.rgbaOutput = folder.appendingPathComponent("frame\(frame).rgba").path
            options.frame = frame
            #expect(try Self.decode(options).0 == .success)
            let written = try Data(contentsOf: URL(fileURLWithPath: try #require(options.rgbaOutput)))
            #expect(written == Data(try animation.frame(at: frame)), "frame \(frame)")
            #expect(written.count == 48 * 32 * 4)
        }
        var past = DecodeOptions()
        past.paths = [file.path]
        past.rgbaOutput = folder.appendingPathComponent("past.rgba").path
        past.frame = 3
        let (status, lines, _) = try Self.decode(past)
        #expect(status == .failure)
        #expect(lines.first?.contains("frame 3 out of range: the animation has 3 frames") == true, "\(lines)")
    }

    @Test func thumbnailsAreMadeFromJPEGXL() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = ThumbnailOptions()
        options.inputs = ["still-lossy.jxl", "animation-3-loops.jxl", "recompressed-jpeg.jxl"].map { Self.fixtures.appendingPathComponent($0).path }
        options.size = PixelSize(width: 24, height: 24)
        options.format = .png
        options.outputDirectory = folder.path
        let lines = LineCollector()
        let status = ThumbnailCommand(options: options, reporter: ThumbnailJSONReporter(format: options.format, write: lines.add)).run()
        #expect(status == .success, "\(lines.lines)")
        var sizes: [String: [Int]] = [:]
        for line in lines.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let input = URL(fileURLWithPath: try #require(object["input"] as? String)).lastPathComponent
            let file = try #require(object["file"] as? String, "\(input): \(object["error"] ?? "")")
            let image = try ImageCodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(image.format == .png)
            sizes[input] = [image.width, image.height]
        }
        // 48×32 and 64×48 fitted into 24×24.
        #expect(sizes == ["still-lossy.jxl": [24, 16], "animation-3-loops.jxl": [24, 16], "recompressed-jpeg.jxl": [24, 18]])
    }
}

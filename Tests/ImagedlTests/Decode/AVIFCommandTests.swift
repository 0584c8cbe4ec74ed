import Decoding
import Foundation
@testable import ImagedlCore
import TestImages
import TestRequirements
import Testing

/// `imagedl` on AVIF: `decode --json` reports the format, frames, duration and loop count of a sequence,
/// `--rgba --frame N` writes frame N, `thumbnail` reads AVIF and writes it with `--format avif`.
@Suite(.serialized, .offThePool) struct AVIFCommandTests {
    /// Five 48×32 frames, 100 ms each (timescale 10), key frames at 0 and 3.
    static func sequence() throws -> Data {
        let frames = (0..<5).map { AVIFFiles.pattern(width: 48, height: 32, frame: $0, alpha: true) }
        return try AVIFFiles.data(frames, ["-s", "10", "-k", "3", "--timescale", "10", "--duration", "1"])
    }

    @Test(.requires(.libavif, .avifTools))
    func decodeReportsTheSequenceAndWritesAnyFrame() throws {
        let folder = try AVIFFiles.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("sequence.avif")
        let data = try Self.sequence()
        try data.write(to: file)
        let animation = try #require(try ImageCodersManager.shared.decode(data).animation)
        for frame in [0, 4, 2] {
            var options = DecodeOptions()
            options.paths = [file.path]
            options.json = true
            options.rgbaOutput = folder.appendingPathComponent("frame\(frame).rgba").path
            options.frame = frame
            let lines = LineCollector()
            #expect(DecodeCommand(options: options, emit: lines.add, emitError: lines.add).run() == .success, "\(lines.lines)")
            let line = try #require(lines.lines.first)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["format"] as? String == "avif")
            #expect(object["width"] as? Int == 48 && object["height"] as? Int == 32)
            #expect(object["frames"] as? Int == 5)
            #expect(object["duration"] as? Double == 0.5)
            #expect(object["loop_count"] as? Int == 0)  // no edit list: forever
            let written = try Data(contentsOf: URL(fileURLWithPath: try #require(options.rgbaOutput)))
            #expect(written == Data(try animation.frame(at: frame)))
        }
        var past = DecodeOptions()
        past.paths = [file.path]
        past.rgbaOutput = folder.appendingPathComponent("past.rgba").path
        past.frame = 5
        let lines = LineCollector()
        #expect(DecodeCommand(options: past, emit: lines.add, emitError: lines.add).run() == .failure)
        #expect(lines.lines.first?.contains("frame 5 out of range: the animation has 5 frames") == true, "\(lines.lines)")
        // The plain line says it too.
        var plain = DecodeOptions()
        plain.paths = [file.path]
        let line = LineCollector()
        _ = DecodeCommand(options: plain, emit: line.add, emitError: line.add).run()
        #expect(line.lines.first?.contains("avif 48x32, 5 frames, 500.0 ms, loops forever") == true, "\(line.lines)")
    }

    @Test(.requires(.libavif, .avifEncoder, .avifTools))
    func thumbnailReadsAndWritesAVIF() throws {
        let folder = try AVIFFiles.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("photo.avif")
        try AVIFFiles.data([AVIFFiles.pattern(width: 200, height: 120)], ["-s", "10"]).write(to: input)
        for format in [ThumbnailOptions.Format.jpeg, .avif] {
            var options = ThumbnailOptions()
            options.inputs = [input.path]
            options.size = PixelSize(width: 50, height: 50)
            options.format = format
            options.outputDirectory = folder.appendingPathComponent("out-\(format.rawValue)").path
            let lines = LineCollector()
            let command = ThumbnailCommand(options: options, reporter: ThumbnailJSONReporter(format: format, write: lines.add))
            #expect(command.run() == .success, "\(lines.lines)")
            let written = URL(fileURLWithPath: options.outputDirectory).appendingPathComponent("photo.\(format.fileExtension)")
            let image = try ImageCodersManager.shared.decode(try Data(contentsOf: written))
            #expect(image.format == format.imageFormat && image.width == 50 && image.height == 30, "\(format)")
        }
        #expect(ParsedArguments.usageError(["thumbnail", input.path, "--size", "9", "--output", "o", "--format", "avif"]) == nil)
    }

    /// Without an AVIF encoder the run stops before any work with one line naming what is missing.
    @Test func thumbnailFormatAVIFWithoutAnEncoderIsOneClearError() throws {
        let coders = ImageCodersManager(coders: [PNGCoder(), JPEGCoder()])
        #expect(ThumbnailCommand.encoderUnavailableReason(.avif, coders: coders) == "no AVIF encoder in this build")
        #expect(ThumbnailCommand.encoderUnavailableReason(.jpeg, coders: coders) == nil)
        var options = ThumbnailOptions()
        options.inputs = ["/nonexistent.png"]
        options.format = .avif
        options.outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("never-\(UUID().uuidString)").path
        let lines = LineCollector()
        let command = ThumbnailCommand(options: options, reporter: ThumbnailJSONReporter(format: .avif, write: lines.add), coders: coders)
        #expect(command.run() == .failure)
        #expect(lines.lines.isEmpty, "nothing was processed")
        #expect(!FileManager.default.fileExists(atPath: options.outputDirectory))
    }
}

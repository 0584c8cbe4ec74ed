import Decoding
import Foundation
@testable import ImagedlCore
import TestRequirements
import TestImages
import Testing

/// The animations that used to fail (1000×1000 × 120 frames, 2000×2000 × 40) download with every frame, as
/// thumbnails too, on both transports; `imagedl decode --frame N` writes one composited frame.
@Suite(.serialized, .offThePool) struct BigAnimationTests {
    static let gif1000 = LargeAnimations.gif(side: 1000, frames: 120)

    private static func server() throws -> LoopbackHTTPServer {
        var routes: [String: LoopbackHTTPServer.Resource] = [
            "/1000.gif": .init(body: gif1000, contentType: "image/gif"),
            "/2000.gif": .init(body: LargeAnimations.gif(side: 2000, frames: 40), contentType: "image/gif"),
            "/1000.png": .init(body: try LargeAnimations.apng(side: 1000, frames: 120), contentType: "image/apng"),
        ]
        if Requirement.shouldRun(.libwebp) {
            routes["/1000.webp"] = .init(body: try LargeAnimations.webp(side: 1000, frames: 120), contentType: "image/webp")
        }
        if Requirement.shouldRun(.libavif, .avifTools) {
            routes["/1000.avif"] = .init(body: try AVIFFiles.largeSequence(side: 1000, frames: 120), contentType: "image/avif")
        }
        return try LoopbackHTTPServer(routes: routes)
    }

    static var transports: [TransportName] { [.urlsession, .curl] }

    @Test(arguments: transports)
    func bigAnimationsDownloadWithEveryFrame(transport: TransportName) throws {
        if transport == .curl { try Requirement.check(.libcurl) }
        let server = try Self.server()
        defer { server.stop() }
        var expected = ["/1000.gif": 120, "/2000.gif": 40, "/1000.png": 120]
        if Requirement.shouldRun(.libwebp) { expected["/1000.webp"] = 120 }
        if Requirement.shouldRun(.libavif, .avifTools) {
            try Requirement.check(.libavif, .avifTools)
            expected["/1000.avif"] = 120
        }
        for thumbnail in [nil, PixelSize(width: 128, height: 128)] {
            var options = DownloadOptions()
            options.urls = expected.keys.sorted().map(server.url)
            options.json = true
            options.transport = transport
            options.thumbnail = thumbnail
            let lines = LineCollector()
            let status = DownloadCommand(options: options, reporter: JSONReporter(write: lines.add)).run()
            #expect(status == .success, "\(lines.lines)")
            for line in lines.lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let path = try #require((object["url"] as? String).flatMap(URL.init(string:))?.path)
                #expect(object["status"] as? String == "ok", "\(path): \(object["error"] ?? "")")
                #expect(object["frames"] as? Int == expected[path], "\(path) frames")
                #expect(object["width"] as? Int == (thumbnail == nil ? (path == "/2000.gif" ? 2000 : 1000) : 128), "\(path)")
            }
        }
    }

    @Test func decodeWritesTheRequestedFrameAndReportsTheDuration() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-frame-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.gif")
        try LargeAnimations.gif(side: 64, frames: 7).write(to: file)
        let image = try ImageCodersManager.shared.decode(try Data(contentsOf: file))
        let animation = try #require(image.animation)
        for frame in [0, 4, 6] {
            var options = DecodeOptions()
            options.paths = [file.path]
            options.rgbaOutput = folder.appendingPathComponent("frame\(frame).rgba").path
            options.frame = frame
            options.json = true
            let lines = LineCollector()
            #expect(DecodeCommand(options: options, emit: lines.add, emitError: lines.add).run() == .success)
            #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(options.rgbaOutput))) == Data(try animation.frame(at: frame)))
            let line = try #require(lines.lines.first)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["frames"] as? Int == 7 && object["duration"] as? Double == 0.28)
        }
        var past = DecodeOptions()
        past.paths = [file.path]
        past.rgbaOutput = folder.appendingPathComponent("past.rgba").path
        past.frame = 7
        let lines = LineCollector()
        #expect(DecodeCommand(options: past, emit: lines.add, emitError: lines.add).run() == .failure)
        #expect(lines.lines.first?.contains("frame 7 out of range: the animation has 7 frames") == true, "\(lines.lines)")
        #expect(ParsedArguments.usageError(["decode", file.path, "--frame", "2"])?.contains("--rgba") == true)
        #expect(ParsedArguments.usageError(["decode", file.path, "--rgba", "x", "--frame", "-1"]) != nil)
    }
}

import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `imagedl thumbnail` end to end: files and loopback URLs in, one file per input out, `--json` naming
/// each file, unique names, orientation, fill, formats, and per-input errors.
@Suite(.serialized, .offThePool) struct ThumbnailCommandTests {
    /// A fresh folder under the temporary directory, removed by the caller's `defer`.
    private static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-thumb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A smooth 640×480 test picture, optionally tagged with an EXIF orientation (pixels stored unrotated).
    private static func jpeg(orientation: ImageOrientation = .up) throws -> Data {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(640 * 480 * 4)
        for y in 0..<480 { for x in 0..<640 { pixels += [UInt8(x * 255 / 639), UInt8(y * 255 / 479), 90, 255] } }
        let image = DecodedImage(width: 640, height: 480, pixels: pixels, format: .jpeg, orientation: orientation)
        return try ImageCodersManager.shared.encode(image, options: ImageEncodingOptions(
            format: .jpeg, quality: 0.9, normalizesOrientation: false))
    }

    /// Runs the command with a JSON collector; returns the exit code and the objects by input.
    private static func run(_ options: ThumbnailOptions) throws -> (ExitCode, [String: [String: Any]]) {
        let lines = LineCollector()
        let command = ThumbnailCommand(options: options, reporter: ThumbnailJSONReporter(format: options.format, write: lines.add))
        let status = command.run()
        var byInput: [String: [String: Any]] = [:]
        for line in lines.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            byInput[try #require(object["input"] as? String)] = object
        }
        #expect(byInput.count == options.inputs.count, "one JSON object per input")
        return (status, byInput)
    }

    @Test("files: oriented fit, unique names, JSON names the written file, bad inputs fail alone")
    func files() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a"), b = dir.appendingPathComponent("b")
        try FileManager.default.createDirectory(at: a, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: b, withIntermediateDirectories: true)
        try Self.jpeg().write(to: a.appendingPathComponent("photo.jpg"))
        try Self.jpeg(orientation: .right).write(to: b.appendingPathComponent("photo.jpg"))
        try Data("not an image".utf8).write(to: dir.appendingPathComponent("notes.txt"))

        var options = ThumbnailOptions()
        options.inputs = [a.appendingPathComponent("photo.jpg").path, b.appendingPathComponent("photo.jpg").path,
                          dir.appendingPathComponent("notes.txt").path, dir.appendingPathComponent("missing.jpg").path]
        options.size = PixelSize(width: 128, height: 128)
        options.outputDirectory = dir.appendingPathComponent("out").path
        options.concurrency = 2
        let (status, objects) = try Self.run(options)
        #expect(status == .failure)

        let first = try #require(objects[options.inputs[0]]), second = try #require(objects[options.inputs[1]])
        #expect(first["status"] as? String == "ok" && second["status"] as? String == "ok")
        let firstFile = try #require(first["file"] as? String), secondFile = try #require(second["file"] as? String)
        #expect(URL(fileURLWithPath: firstFile).lastPathComponent == "photo.jpg")
        #expect(URL(fileURLWithPath: secondFile).lastPathComponent == "photo-2.jpg")
        for (object, file, size) in [(first, firstFile, (128, 96)), (second, secondFile, (96, 128))] {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(object["bytes"] as? Int == data.count)
            let image = try ImageCodersManager.shared.decode(data)
            // Orientation applied to the pixels: the rotated photo comes out portrait, with no tag left.
            #expect(image.width == size.0 && image.height == size.1 && image.orientation == .up)
            #expect(object["width"] as? Int == size.0 && object["height"] as? Int == size.1)
            #expect(image.format == .jpeg && object["format"] as? String == "jpeg")
        }
        let notes = try #require(objects[options.inputs[2]]), missing = try #require(objects[options.inputs[3]])
        #expect(notes["status"] as? String == "error" && notes["file"] is NSNull)
        #expect((notes["error"] as? String)?.contains("not an image") == true, "\(notes["error"] ?? "")")
        #expect(missing["error"] as? String == "no such file")
        let written = try FileManager.default.contentsOfDirectory(atPath: options.outputDirectory).sorted()
        #expect(written == ["photo-2.jpg", "photo.jpg"])
    }

    @Test("--fill gives exactly the box; PNG keeps alpha; WebP when libwebp can encode")
    func fillAndFormats() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("wide.jpg")
        try Self.jpeg().write(to: source)
        var options = ThumbnailOptions()
        options.inputs = [source.path]
        options.size = PixelSize(width: 100, height: 100)
        options.fill = true
        options.outputDirectory = dir.path
        for format in ThumbnailOptions.Format.allCases {
            if format == .webp, WebPCoder().encoderUnavailableReason != nil { continue }
            options.format = format
            let (status, objects) = try Self.run(options)
            #expect(status == .success)
            let file = try #require(objects[source.path]?["file"] as? String)
            #expect(file.hasSuffix(".\(format.fileExtension)"))
            let image = try ImageCodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(image.width == 100 && image.height == 100 && image.format == format.imageFormat, "\(format)")
        }
    }

    @Test("URLs are downloaded through the downloader; HTTP errors fail only their input")
    func urls() throws {
        let server = try LoopbackHTTPServer(routes: [
            "/photo.jpg": .init(body: try Self.jpeg(), contentType: "image/jpeg"),
            "/photo.png": .init(body: try DemoSamples.data(named: "photo.png"), contentType: "image/png"),
        ])
        defer { server.stop() }
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = ThumbnailOptions()
        options.inputs = ["/photo.jpg", "/photo.png", "/missing.jpg"].map { server.url($0).absoluteString }
        options.size = PixelSize(width: 64, height: 64)
        options.outputDirectory = dir.path
        options.network.timeout = 20
        let (status, objects) = try Self.run(options)
        #expect(status == .failure)
        for input in options.inputs.prefix(2) {
            let object = try #require(objects[input])
            #expect(object["status"] as? String == "ok", "\(input): \(object["error"] ?? "")")
            let file = try #require(object["file"] as? String)
            let image = try ImageCodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(max(image.width, image.height) == 64)
        }
        let missing = try #require(objects[options.inputs[2]])
        #expect((missing["error"] as? String)?.hasPrefix("HTTP 404") == true, "\(missing["error"] ?? "")")
        // photo.jpg and photo.png both become photo.*.jpg: the second is made unique.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == ["photo.jpg", "photo-2.jpg"])
    }

    @Test("plain lines and a summary when not writing JSON")
    func lines() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("p.jpg")
        try Self.jpeg().write(to: source)
        var options = ThumbnailOptions()
        options.inputs = [source.path, dir.appendingPathComponent("nope.jpg").path]
        options.size = PixelSize(width: 32, height: 32)
        options.outputDirectory = dir.appendingPathComponent("out").path
        let lines = LineCollector()
        let status = ThumbnailCommand(options: options, reporter: ThumbnailLineReporter(live: false, write: lines.add)).run()
        #expect(status == .failure)
        let text = lines.lines.joined()
        #expect(text.contains("p.jpg → ") && text.contains("32×24") && text.contains("nope.jpg: no such file"))
        #expect(text.contains("1 of 2 thumbnails written") && text.contains("1 failed"))
    }
}

/// `imagedl thumbnail` command lines.
@Suite struct ThumbnailArgumentsTests {
    private func thumbnail(_ args: [String]) throws -> ThumbnailOptions {
        guard case .thumbnail(let options) = try ArgumentParser.parse(["thumbnail"] + args) else {
            Issue.record("expected a thumbnail command for \(args)")
            return ThumbnailOptions()
        }
        return options
    }

    private func usageError(_ args: [String]) -> String? {
        do {
            _ = try ArgumentParser.parse(["thumbnail"] + args)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func everyOption() throws {
        let options = try thumbnail([
            "a.jpg", "--size", "320x240", "--fill", "--format", "webp", "--quality=70", "--output", "out", "--json",
            "--concurrency", "3", "https://example.com/b.png", "--timeout", "5", "--header", "X-A: 1", "--", "-odd name.png",
        ])
        #expect(options.inputs == ["a.jpg", "https://example.com/b.png", "-odd name.png"])
        #expect(options.size == PixelSize(width: 320, height: 240) && options.fill && options.format == .webp)
        #expect(options.quality == 70 && options.outputDirectory == "out" && options.json && options.concurrency == 3)
        #expect(options.network.timeout == 5 && options.network.headers == [HTTPHeader(name: "X-A", value: "1")])
        #expect(options.network.urls.isEmpty)
        #expect(options.encoding == ImageEncodingOptions(format: .webp, quality: 0.7))
    }

    @Test func defaultsAndShortForms() throws {
        let options = try thumbnail(["x.png", "--size", "200", "--output", "o"])
        #expect(options.size == PixelSize(width: 200, height: 200) && !options.fill && options.format == .jpeg)
        #expect(options.quality == 80 && options.concurrency == ProcessInfo.processInfo.activeProcessorCount)
        #expect(try thumbnail(["x", "--size", "8x8", "--output", "o", "--format", "JPG"]).format == .jpeg)
        #expect(try thumbnail(["x", "--size", "8x8", "--output", "o", "--format", "webp", "--quality", "100"]).encoding.lossless)
    }

    @Test func inputList() throws {
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-list-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try "one.jpg\n\n# a comment\n  https://example.com/two.png  \n".write(to: list, atomically: true, encoding: .utf8)
        let options = try thumbnail(["zero.jpg", "--input", list.path, "--size", "10x10", "--output", "o"])
        #expect(options.inputs == ["zero.jpg", "one.jpg", "https://example.com/two.png"])
    }

    @Test func usageErrors() {
        #expect(usageError(["a.jpg", "--output", "o"]) == "thumbnail needs --size WxH")
        #expect(usageError(["a.jpg", "--size", "10x10"]) == "thumbnail needs --output DIR")
        #expect(usageError(["--size", "10x10", "--output", "o"]) == "thumbnail needs at least one FILE or URL")
        #expect(usageError(["a", "--size", "0x10", "--output", "o"])?.hasPrefix("--size needs WxH") == true)
        #expect(usageError(["a", "--size", "10x", "--output", "o"])?.hasPrefix("--size needs WxH") == true)
        #expect(usageError(["a", "--size", "10x10", "--output", "o", "--format", "gif"])?.hasPrefix("--format needs") == true)
        #expect(usageError(["a", "--size", "10x10", "--output", "o", "--quality", "0"])?.hasPrefix("--quality needs") == true)
        #expect(usageError(["a", "--size", "10x10", "--output", "o", "--png"]) == "--png does not apply to thumbnail")
        #expect(usageError(["a", "--size", "10x10", "--output", "o", "--timeout", "-1"])?.hasPrefix("--timeout needs") == true)
        #expect(usageError(["a", "--size", "10x10", "--output", "o", "--bogus"]) == "unknown option '--bogus'")
        #expect(usageError(["a", "--size"]) == "--size needs a value")
        #expect(usageError(["a", "--size", "10x10", "--output", "o", "--input", "/nonexistent/list"]) == "--input: cannot read '/nonexistent/list'")
    }

    @Test func naming() {
        var options = ThumbnailOptions()
        options.outputDirectory = "/out"
        options.format = .png
        options.inputs = ["dir/a.jpg", "other/a.jpeg", "https://h.test/p/a.gif?x=1", "https://h.test/", "noext"]
        let names = ThumbnailCommand.plan(options).map(\.destination.lastPathComponent)
        // The host stands in for an empty path; like file names, its last dot starts the replaced extension.
        #expect(names == ["a.png", "a-2.png", "a-3.png", "h.png", "noext.png"])
    }
}

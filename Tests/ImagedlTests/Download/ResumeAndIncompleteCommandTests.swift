import Decoding
import Foundation
import OperationDownloader
import TestRequirements
import Testing
@testable import ImagedlCore

/// Issue 37 in `imagedl`: a cut body is retried under `--retry` (and resumed with Range where the server allows)
/// on every transport; incomplete data is an error in every command unless `--allow-incomplete`; `attempts`,
/// `cache`, `source`, `http_status` and `resumed_from` say what happened.
@Suite(.offThePool) struct ResumeAndIncompleteCommandTests {
    /// The demo's progressive JPEG cut to 60 %: a complete response of a truncated file.
    static func truncatedJPEG() throws -> Data {
        let whole = try DemoSamples.data(named: "progressive.jpg")
        return whole.prefix(whole.count * 6 / 10)
    }

    private static func download(_ options: DownloadOptions) -> (ExitCode, [[String: Any]], DownloadCommand) {
        var options = options
        options.json = true
        let lines = LineCollector()
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: lines.add))
        let status = command.run()
        let objects = lines.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return (status, objects, command)
    }

    // MARK: - A lost connection

    /// `/cut.png` sends half its body, then closes, once; with a strong ETag the second request asks for the rest.
    @Test(arguments: ImagedlTransports.all, [true, false])
    func aCutBodyIsRetriedAndResumedWithRetry(_ transport: TransportName, withValidator: Bool) throws {
        try ImagedlTransports.check(transport)
        let png = try DemoSamples.data(named: "photo.png")
        let server = try LoopbackHTTPServer(routes: [
            "/cut.png": .init(body: png, contentType: "image/png", cutFirst: 1, etag: withValidator ? "\"photo-1\"" : nil),
        ])
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/cut.png")]
        options.transport = transport
        options.retry = 2
        let (status, objects, _) = Self.download(options)
        let object = try #require(objects.first)
        #expect(status == .success && object["status"] as? String == "ok", "\(object)")
        #expect(object["attempts"] as? Int == 2 && server.requestCount("/cut.png") == 2)
        #expect(object["bytes"] as? Int == png.count)
        if withValidator {
            #expect(object["resumed_from"] as? Int == png.count / 2)
            #expect(object["http_status"] as? Int == 206, "the last request's status")
        } else {
            #expect(object["resumed_from"] is NSNull && object["http_status"] as? Int == 200)
        }
    }

    /// Without `--retry` the cut is one attempt and one clear error, the same on every transport.
    @Test(arguments: ImagedlTransports.all)
    func withoutRetryACutBodyIsConnectionLost(_ transport: TransportName) throws {
        try ImagedlTransports.check(transport)
        let png = try DemoSamples.data(named: "photo.png")
        let server = try LoopbackHTTPServer(routes: ["/cut.png": .init(body: png, contentType: "image/png", cutFirst: 1)])
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/cut.png")]
        options.transport = transport
        let (status, objects, _) = Self.download(options)
        let object = try #require(objects.first)
        #expect(status == .failure && object["attempts"] as? Int == 1)
        #expect(object["error"] as? String == "connection lost (the connection closed after \(png.count / 2) of \(png.count) body bytes)")
    }

    // MARK: - Incomplete data

    @Test(arguments: [false, true])
    func aTruncatedURLFailsUnlessAllowed(_ allow: Bool) throws {
        let server = try LoopbackHTTPServer(routes: ["/half.jpg": .init(body: try Self.truncatedJPEG(), contentType: "image/jpeg")])
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/half.jpg")]
        options.allowIncomplete = allow
        let (status, objects, _) = Self.download(options)
        let object = try #require(objects.first)
        if allow {
            #expect(status == .success && object["incomplete"] as? Bool == true)
        } else {
            #expect(status == .failure && object["incomplete"] is NSNull)
            #expect((object["error"] as? String)?.hasPrefix("truncated: the data (") == true, "\(object)")
        }
    }

    private static func thumbnails(_ inputs: [String], allow: Bool, into folder: URL) throws -> (ExitCode, [[String: Any]]) {
        var options = ThumbnailOptions()
        options.inputs = inputs
        options.size = PixelSize(width: 64, height: 64)
        options.outputDirectory = folder.path
        options.network.allowIncomplete = allow
        let lines = LineCollector()
        let command = ThumbnailCommand(options: options, reporter: ThumbnailJSONReporter(format: options.format, write: lines.add))
        let status = command.run()
        return (status, lines.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
    }

    /// A truncated file and the same bytes from a URL: the same error words as the download, or with
    /// `--allow-incomplete` a thumbnail marked incomplete.
    @Test(arguments: [false, true])
    func aTruncatedFileOrURLThumbnailFailsUnlessAllowed(_ allow: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-half-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = try Self.truncatedJPEG()
        let file = folder.appendingPathComponent("half.jpg")
        try bytes.write(to: file)
        let server = try LoopbackHTTPServer(routes: ["/half.jpg": .init(body: bytes, contentType: "image/jpeg")])
        defer { server.stop() }
        let (status, objects) = try Self.thumbnails(
            [file.path, server.url("/half.jpg").absoluteString], allow: allow, into: folder.appendingPathComponent("out"))
        #expect(objects.count == 2)
        var downloadOptions = DownloadOptions()
        downloadOptions.urls = [server.url("/half.jpg")]
        let downloadError = Self.download(downloadOptions).1.first?["error"] as? String
        for object in objects {
            if allow {
                #expect(object["status"] as? String == "ok" && object["incomplete"] as? Bool == true, "\(object)")
            } else {
                #expect(object["status"] as? String == "error" && object["incomplete"] is NSNull)
                #expect(object["error"] as? String == downloadError, "one wording for one failure in every command")
            }
        }
        #expect(status == (allow ? .success : .failure))
    }

    @Test(arguments: [false, true])
    func decodeRGBAOfATruncatedFileFailsUnlessAllowed(_ allow: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-half-rgba-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("half.jpg")
        try Self.truncatedJPEG().write(to: file)
        var options = DecodeOptions()
        options.paths = [file.path]
        options.json = true
        options.rgbaOutput = folder.appendingPathComponent("half.rgba").path
        options.allowIncomplete = allow
        let lines = LineCollector()
        let status = DecodeCommand(options: options, emit: lines.add, emitError: { _ in }).run()
        let line = try #require(lines.lines.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["incomplete"] as? Bool == true)
        let written = FileManager.default.fileExists(atPath: folder.appendingPathComponent("half.rgba").path)
        if allow {
            #expect(status == .success && written && object["error"] is NSNull)
        } else {
            #expect(status == .failure && !written)
            #expect((object["error"] as? String)?.hasPrefix("truncated: the data (") == true, "\(object)")
        }
    }

    // MARK: - Attempts and sources

    /// A second run with `--http-cache` gets the image from the folder and the stored 404 too, without a request:
    /// attempts 0, cache "hit", source "http_cache"; lines and the summary say so.
    @Test func attemptsAndCacheForDiskHitsAndAStored404() throws {
        let gif = try DemoSamples.data(named: "bounce.gif")
        let server = try LoopbackHTTPServer(routes: [
            "/a.gif": .init(body: gif, contentType: "image/gif", cacheControl: "max-age=600"),
            "/gone.gif": .init(body: Data("gone".utf8), contentType: "text/plain", cacheControl: "max-age=600", status: "404 Not Found"),
        ])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-sources-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        options.urls = [server.url("/a.gif"), server.url("/gone.gif")]
        options.httpCacheDirectory = folder.path
        let (_, first, _) = Self.download(options)
        #expect(first.count == 2)
        #expect(first.allSatisfy { $0["attempts"] as? Int == 1 && $0["cache"] is NSNull && $0["source"] as? String != "http_cache" }, "\(first)")
        let (_, second, command) = Self.download(options)
        #expect(second.count == 2)
        for object in second {
            #expect(object["attempts"] as? Int == 0, "\(object)")
            #expect(object["cache"] as? String == "hit" && object["source"] as? String == "http_cache", "\(object)")
        }
        let gone = try #require(second.first { ($0["url"] as? String)?.hasSuffix("/gone.gif") == true })
        #expect(gone["status"] as? String == "error" && gone["http_status"] as? Int == 404 && gone["error"] as? String == "HTTP 404 Not Found")
        #expect(server.requestCount("/a.gif") == 1 && server.requestCount("/gone.gif") == 1)
        let summary = SummaryTable.render(command.results, columns: 200).last ?? ""
        #expect(summary.hasSuffix("cache: 0 memory, 2 HTTP hits, 0 stale, 0 revalidated"), "\(summary)")
        let lines = command.results.map { ProgressLine.finished($0, columns: 200) }
        #expect(lines.allSatisfy { $0.contains("(HTTP cache)") }, "\(lines)")
    }

    /// A memory-cache answer (no bytes, no metrics): attempts 0, cache "hit", source "memory_cache", its own words.
    @Test func aMemoryHitIsRecordedAsOne() throws {
        let image = DecodedImage(width: 2, height: 2, pixels: [UInt8](repeating: 255, count: 16), format: .png)
        var record = DownloadRecord(index: 0, url: try #require(URL(string: "http://a.test/1.png")))
        record.finish(with: ImageTargetResult(image: image, data: nil, url: record.url, source: .memoryCache), observed: nil)
        let json = record.json.serialized()
        #expect(json.contains("\"cache\":\"hit\"") && json.contains("\"source\":\"memory_cache\"") && json.contains("\"attempts\":0"))
        #expect(ProgressLine.finished(record, columns: 200).contains("(memory cache)"))
        #expect(CacheTally([record]).text.hasPrefix("; cache: 1 memory, 0 HTTP hits"))
    }
}

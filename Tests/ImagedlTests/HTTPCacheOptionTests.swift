import Decoding
import Foundation
import Testing
@testable import ImagedlCore

/// `--http-cache DIR` end to end: a second run (a new downloader, so no memory cache) takes the image from
/// the folder without a request, and the summary says "hit".
@Suite struct HTTPCacheOptionTests {
    @Test func secondRunIsServedFromTheHTTPCache() throws {
        let gif = try DemoSamples.data(named: "bounce.gif")
        guard ImageCodersManager.shared.coders.contains(where: { $0.canDecode(gif) }) else { return }
        let server = try LoopbackHTTPServer(routes: [
            "/bounce.gif": .init(body: gif, contentType: "image/gif", cacheControl: "max-age=3600"),
        ])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("imagedl-http-cache-\(UUID().uuidString)/nested")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }

        func run(cache: Bool) throws -> DownloadRecord {
            var options = DownloadOptions()
            options.urls = [server.url("/bounce.gif")]
            options.httpCacheDirectory = cache ? folder.path : nil
            let command = DownloadCommand(options: options, reporter: JSONReporter(write: { _ in }))
            #expect(command.run() == .success)
            return try #require(command.results.first)
        }

        let first = try run(cache: true)
        #expect(first.state == .succeeded && !first.cacheHit)
        #expect(server.requestCount("/bounce.gif") == 1)
        let stored = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!stored.isEmpty, "nothing was written to the --http-cache folder")

        let second = try run(cache: true)
        #expect(server.requestCount("/bounce.gif") == 1, "the fresh entry was not used")
        #expect(second.state == .succeeded && second.cacheHit)
        #expect(second.httpStatus == 200)
        #expect(second.bytes == gif.count)
        #expect(second.format == .gif && second.width == 96)
        let row = SummaryTable.render([second], columns: 200).first { $0.contains("bounce.gif") } ?? ""
        #expect(row.split(separator: " ").contains("hit"), "the cache column of: \(row)")
        #expect(second.json.serialized().contains("\"cache_hit\":true"))

        // Without the option nothing is read from the folder.
        let third = try run(cache: false)
        #expect(server.requestCount("/bounce.gif") == 2)
        #expect(third.state == .succeeded && !third.cacheHit)
    }

    @Test func unusableFolderFailsBeforeAnyDownload() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-not-a-dir-\(UUID().uuidString)")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var options = DownloadOptions()
        options.urls = [URL(string: "http://127.0.0.1:9/never.png") ?? file]
        options.httpCacheDirectory = file.appendingPathComponent("sub").path
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: { _ in }))
        #expect(command.run() == .failure)
        #expect(command.results.isEmpty)
    }
}

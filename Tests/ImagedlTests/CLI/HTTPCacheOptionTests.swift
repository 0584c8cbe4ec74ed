import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `--http-cache DIR` end to end: a second run (a new downloader, so no memory cache) takes the image from
/// the folder without a request, and the summary says "hit".
@Suite(.offThePool) struct HTTPCacheOptionTests {
    @Test func secondRunIsServedFromTheHTTPCache() throws {
        let gif = try DemoSamples.data(named: "bounce.gif")
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

    /// The summary and `--json` tell fresh hits, stale answers and revalidations apart.
    @Test func summaryCountsHitsStaleAndRevalidated() throws {
        func record(_ index: Int, _ result: DownloadRecord.CacheResult?) throws -> DownloadRecord {
            var record = DownloadRecord(index: index, url: try #require(URL(string: "http://h.test/\(index).png")))
            record.state = .succeeded
            record.bytes = 10
            record.cacheResult = result
            return record
        }
        let records = [try record(0, .hit), try record(1, .stale), try record(2, .revalidated), try record(3, .hit),
                       try record(4, .memory), try record(5, nil)]
        let lines = SummaryTable.render(records, columns: 200)
        #expect(lines.last == "6 of 6 downloaded, 60 B in all; cache: 1 memory, 2 HTTP hits, 1 stale, 1 revalidated")
        #expect(lines[3].split(separator: " ").contains("stale") && lines[4].split(separator: " ").contains("revalidated"))
        #expect(records[1].json.serialized().contains("\"cache\":\"stale\""))
        #expect(records[2].json.serialized().contains("\"cache\":\"revalidated\""))
        #expect(records[5].json.serialized().contains("\"cache\":null"))
    }

    /// A stored response past its max-age but within stale-while-revalidate: the second run answers at once
    /// from the folder and says so.
    @Test func staleAnswersAreReportedAsStale() throws {
        let gif = try DemoSamples.data(named: "bounce.gif")
        // The demo server writes the Cache-Control value into the header block as given: an Age line rides along.
        let server = try LoopbackHTTPServer(routes: [
            "/stale.gif": .init(body: gif, contentType: "image/gif", cacheControl: "max-age=60, stale-while-revalidate=3600\r\nAge: 120"),
        ])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-http-cache-stale-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        func run() throws -> DownloadRecord {
            var options = DownloadOptions()
            options.urls = [server.url("/stale.gif")]
            options.httpCacheDirectory = folder.path
            let command = DownloadCommand(options: options, reporter: JSONReporter(write: { _ in }))
            #expect(command.run() == .success)
            return try #require(command.results.first)
        }
        #expect(try run().cacheResult == nil)
        let second = try run()
        #expect(second.state == .succeeded && second.cacheResult == .stale)
        #expect(SummaryTable.render([second], columns: 200).last?.hasSuffix("cache: 0 memory, 0 HTTP hits, 1 stale, 0 revalidated") == true)
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

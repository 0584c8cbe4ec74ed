import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `imagedl` downloads through the image-target API: each URL's `PreviewPane` receives the partial and final
/// images, and failures still name the HTTP status and MIME type the server sent.
@Suite(.offThePool) struct PreviewPaneTests {
    /// Keeps every call the command makes (all on the command's queue; read after `run()` returned).
    private final class RecordingReporter: DownloadReporter {
        var updates: [DownloadRecord] = []
        var finished: [DownloadRecord] = []
        func begin(_ records: [DownloadRecord]) {}
        func update(_ record: DownloadRecord) { updates.append(record) }
        func finished(_ record: DownloadRecord) { finished.append(record) }
        func end(_ records: [DownloadRecord], interrupted: Bool) {}
    }

    @Test func progressivePreviewShowsPartialImagesThenTheFinalOne() throws {
        let jpeg = try DemoSamples.data(named: "progressive.jpg")
        let server = try LoopbackHTTPServer(routes: [
            // Small pieces with pauses, so the progressive decoder has scans to show before the end.
            "/progressive.jpg": .init(body: jpeg, contentType: "image/jpeg", drip: (chunkSize: 1_500, interval: 0.12)),
        ])
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/progressive.jpg")]
        options.progressive = true
        options.preview = true
        let reporter = RecordingReporter()
        let command = DownloadCommand(options: options, reporter: reporter)
        #expect(command.run() == .success)

        let partials = reporter.updates.compactMap(\.image).filter(\.isIncomplete)
        #expect(!partials.isEmpty, "no partial image reached the pane")
        let record = try #require(command.results.first)
        #expect(record.state == .succeeded)
        #expect(record.httpStatus == 200)
        #expect(record.cacheHit == false)
        let final = try #require(record.image)
        #expect(final.isIncomplete == false)
        #expect(final.width == record.width && final.height == record.height)
    }

    @Test func withoutPreviewNoImageIsKept() throws {
        let server = try LoopbackHTTPServer(routes: [
            "/bounce.gif": .init(body: try DemoSamples.data(named: "bounce.gif"), contentType: "image/gif"),
        ])
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/bounce.gif")]
        let reporter = RecordingReporter()
        let command = DownloadCommand(options: options, reporter: reporter)
        #expect(command.run() == .success)
        #expect(reporter.updates.allSatisfy { $0.image == nil })
        let record = try #require(command.results.first)
        #expect(record.state == .succeeded && record.image == nil && record.format == .gif)
    }

    @Test func failuresNameTheStatusAndTheContentType() throws {
        let server = try LoopbackHTTPServer(routes: [
            // A login page served with 200 where an image was expected.
            "/avatar.png": .init(body: Data("<html><body>Please sign in</body></html>".utf8), contentType: "text/html"),
        ])
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/missing.png"), server.url("/avatar.png")]
        options.preview = true
        let reporter = RecordingReporter()
        let command = DownloadCommand(options: options, reporter: reporter)
        #expect(command.run() == .failure)

        let records = command.results
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0.state == .failed && $0.image == nil })
        #expect(records[0].httpStatus == 404)
        #expect(records[0].error?.hasPrefix("HTTP 404") == true, "\(records[0].error ?? "")")
        #expect(records[1].httpStatus == 200)
        #expect(records[1].error == "not an image: the server sent text/html", "\(records[1].error ?? "")")
        #expect(reporter.finished.count == 2)
    }
}

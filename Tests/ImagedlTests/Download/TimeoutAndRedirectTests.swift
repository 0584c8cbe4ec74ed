import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// imagedl as curl users expect it (issue 20, point 7): `--timeout` is an idle timeout (a slow but steady
/// download succeeds, however long it takes), `--max-time` caps the whole transfer (curl's `-m`), and a
/// redirect loop says "too many redirects (20)".
@Suite(.offThePool) struct TimeoutAndRedirectTests {
    private static func run(_ options: DownloadOptions) -> [[String: Any]] {
        var options = options
        options.json = true
        let lines = LineCollector()
        _ = DownloadCommand(options: options, reporter: JSONReporter(write: lines.add)).run()
        return lines.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// photo.png in 40 pieces 0.1 s apart: at least 3.9 s in all, never more than a few tenths without a byte.
    private static func slowServer() throws -> (LoopbackHTTPServer, Data) {
        let photo = try DemoSamples.data(named: "photo.png")
        let server = try LoopbackHTTPServer(routes: [
            "/slow.png": .init(body: photo, contentType: "image/png", drip: (chunkSize: (photo.count + 39) / 40, interval: 0.1)),
            "/loop.png": .init(body: Data(), contentType: "image/png", redirect: "/loop.png"),
        ])
        return (server, photo)
    }

    @Test(arguments: ImagedlTransports.all)
    func aSlowButSteadyDownloadOutlastsTheIdleTimeout(_ transport: TransportName) throws {
        try ImagedlTransports.check(transport)
        let (server, photo) = try Self.slowServer()
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/slow.png")]
        options.timeout = 3
        options.transport = transport
        let object = try #require(Self.run(options).first)
        #expect(object["status"] as? String == "ok", "\(object["error"] ?? "")")
        #expect(object["bytes"] as? Int == photo.count)
        // It took longer than the idle timeout: no total cap applied.
        #expect((object["seconds"] as? Double ?? 0) > 3, "\(object["seconds"] ?? "")")
    }

    @Test(arguments: ImagedlTransports.all)
    func maxTimeCapsTheWholeTransfer(_ transport: TransportName) throws {
        try ImagedlTransports.check(transport)
        let (server, _) = try Self.slowServer()
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/slow.png")]
        options.timeout = 30
        options.maxTime = 1
        options.transport = transport
        let object = try #require(Self.run(options).first)
        #expect(object["status"] as? String == "error")
        #expect(object["error"] as? String == "timed out: the download took longer than its 1 s maximum",
                "\(object["error"] ?? "")")
    }

    @Test(arguments: ImagedlTransports.all)
    func aRedirectLoopSaysTooManyRedirects(_ transport: TransportName) throws {
        try ImagedlTransports.check(transport)
        let (server, _) = try Self.slowServer()
        defer { server.stop() }
        var options = DownloadOptions()
        options.urls = [server.url("/loop.png")]
        options.transport = transport
        let object = try #require(Self.run(options).first)
        #expect(object["error"] as? String == "too many redirects (20)", "\(object["error"] ?? "")")
        #expect(server.requestCount("/loop.png") == 21)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestRequirements
import Testing
@testable import ImagedlCore

@Suite(.offThePool) struct DemoServerTests {
    /// GET with URLSession, waiting at most 20 s (only to avoid a hang).
    private func fetch(_ url: URL) async throws -> (Data, HTTPURLResponse) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 20
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(from: url)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test func servesBundledSamplesAnd404() async throws {
        let server = try LoopbackHTTPServer(routes: DemoSamples.routes())
        defer { server.stop() }
        #expect(server.port > 0)

        let (gif, gifResponse) = try await fetch(server.url("/bounce.gif"))
        #expect(gifResponse.statusCode == 200)
        #expect(gifResponse.value(forHTTPHeaderField: "Content-Type") == "image/gif")
        #expect(gif == (try DemoSamples.data(named: "bounce.gif")))

        let (_, missing) = try await fetch(server.url("/missing.png"))
        #expect(missing.statusCode == 404)
    }

    @Test func drippedBodyArrivesWhole() async throws {
        let body = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let server = try LoopbackHTTPServer(routes: [
            "/drip.bin": .init(body: body, contentType: "application/octet-stream", drip: (chunkSize: 1_000, interval: 0.01)),
        ])
        defer { server.stop() }
        let (data, response) = try await fetch(server.url("/drip.bin?x=1"))
        #expect(response.statusCode == 200)
        #expect(response.expectedContentLength == 10_000)
        #expect(data == body)
    }

    /// `imagedl --demo` (the README's first command) ends with status 0: every sample arrived and the missing one
    /// was a 404.
    @Test func theDemoEndsWithEverySampleAsDesigned() {
        #expect(Imagedl.run(arguments: ["--demo", "--json"]) == .success)
    }

    @Test func everyDemoSampleIsBundled() throws {
        for sample in DemoSamples.samples {
            guard let file = sample.file else { continue }
            #expect(try DemoSamples.data(named: file).count > 1_000)
        }
        #expect(DemoSamples.samples.contains { $0.file == nil })  // the 404
        #expect(DemoSamples.samples.contains { $0.drip != nil })  // the slow progressive JPEG
    }
}

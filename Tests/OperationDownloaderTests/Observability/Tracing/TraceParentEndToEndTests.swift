import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OperationDownloader
import Testing

/// `traceparent` at the fixture server, on every transport: every request of a download carries the caller's
/// trace id and flags with a span id of its own — the first, each redirect's, each retry's.
@Suite struct TraceParentEndToEndTests {
    let server = FixtureServer.shared
    static let trace = "4bf92f3577b34da6a3ce929d0e0e4736"

    /// Three redirects, then a 503, then (retried from the start: three redirects again) the image: eight requests.
    @Test(arguments: TestTransports.all)
    func everyRequestCarriesTheTraceWithItsOwnSpanID(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let target = "/flaky/\(tag)/image.png?fail=1&status=503&tag=\(tag)"
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        let url = server.url("/redirect/2?to=\(encoded)&tag=\(tag)")
        let (downloader, _) = makeDownloader(transport) {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0.01, maximumDelay: 0.05)
            $0.imageCache = nil
        }
        let context = ImageDownloaderContext(traceParent: "00-\(Self.trace)-00f067aa0ba902b7-01", traceState: "vendor=abc")
        let result = try await downloader.image(for: url, context: context)
        #expect(result.image?.width == 160)
        let log = server.requests(tag: tag)
        let attempt = ["/redirect/2", "/redirect/1", "/redirect/0", "/flaky/\(tag)/image.png"]
        #expect(log.map(\.path) == attempt + attempt)
        let headers = log.compactMap { $0.headers["traceparent"] }
        #expect(headers.count == 8, "\(log.map(\.headers))")
        let parts = headers.map { $0.split(separator: "-").map(String.init) }
        #expect(parts.allSatisfy { $0.count == 4 && $0[0] == "00" && $0[1] == Self.trace && $0[3] == "01" && $0[2].count == 16 })
        #expect(Set(parts.map { $0[2] }).count == 8, "each request its own span id: \(headers)")
        #expect(!parts.contains { $0[2] == "00f067aa0ba902b7" }, "never the caller's own span id")
        #expect(log.allSatisfy { $0.headers["tracestate"] == "vendor=abc" })
    }

    /// Without a trace context nothing is added; an invalid one is not sent.
    @Test(arguments: TestTransports.all)
    func noOrAnInvalidTraceContextSendsNoHeader(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let (downloader, _) = makeDownloader(transport) { $0.imageCache = nil }
        _ = try await downloader.image(for: server.url("/images/image.png?tag=\(tag)&n=1"))
        _ = try await downloader.image(
            for: server.url("/images/image.png?tag=\(tag)&n=2"),
            context: ImageDownloaderContext(traceParent: "00-\(Self.trace.uppercased())-00f067aa0ba902b7-01"))
        let log = server.requests(tag: tag)
        #expect(log.count == 2)
        #expect(log.allSatisfy { $0.headers["traceparent"] == nil && $0.headers["tracestate"] == nil })
    }
}

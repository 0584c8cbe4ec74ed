import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The tracer hook on the scripted transport: a span per download (under the caller's trace), per request (a
/// client span whose context is the `traceparent` sent) and per decode, with OpenTelemetry's attributes; a caller
/// that joins a download in flight is linked, not parented.
@Suite struct TracingSpanTests {
    private let png = ScriptedHarness.fixture("image.png")
    static let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    static let joiner = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    static let late = "00-11111111111111111111111111111111-2222222222222222-00"

    @Test func spansPerDownloadRequestAndDecode() async throws {
        let tracer = RecordingTracer()
        let harness = ScriptedHarness {
            $0.tracer = tracer
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0)
        }
        let (recorder, _) = harness.download(context: ImageDownloaderContext(traceParent: Self.caller))
        let (joined, _) = harness.download(context: ImageDownloaderContext(traceParent: Self.joiner))
        let first = try #require(await harness.transport.transfer(0))
        // Joins once the download's span exists (the first joiner came before it started).
        let (late, _) = harness.download(context: ImageDownloaderContext(traceParent: Self.late))
        first.respond(status: 503, headers: ["Content-Type": "text/plain"])
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        let redirected = try #require(second.redirect(to: ScriptedHarness.url("moved.png")))
        second.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"], url: ScriptedHarness.url("moved.png"))
        second.send(png)
        second.complete(metrics: { var m = TransferMetrics(); m.httpVersion = "1.1"; return m }())
        await recorder.completion()
        await joined.completion()
        await late.completion()
        await awaitIdle(harness.downloader)

        let spans = tracer.all
        let download = try #require(spans.first { $0.name == "image.download" })
        #expect(spans.filter { $0.name == "image.download" }.count == 1, "one operation, one download span")
        #expect(download.kind == .internal)
        #expect(download.parent?.traceParent == Self.caller)
        #expect(download.links.map(\.traceParent) == [Self.joiner, Self.late], "the joining callers' traces are linked")
        #expect(download.endCount == 1)
        #expect(download.attributes["od.source"] == .string("network"))
        #expect(download.attributes["od.attempts"] == .int(2))

        // Three requests: the 503, the retry's 302, the redirect's 200.
        let requests = spans.filter { $0.kind == .client }
        #expect(requests.map(\.name) == ["GET", "GET", "GET"])
        #expect(requests.allSatisfy { $0.parent == download.context && $0.endCount == 1 })
        #expect(requests.map { $0.attributes["http.response.status_code"] } == [.int(503), .int(302), .int(200)])
        #expect(requests[0].attributes["error.type"] == .string("503"))
        #expect(requests[0].status == .error(description: String(describing: ImageDownloaderError.invalidDownloadStatusCode(503))))
        #expect(requests[1].attributes["error.type"] == nil && requests[2].attributes["error.type"] == nil)
        #expect(requests.map { $0.attributes["http.request.resend_count"] } == [nil, .int(1), .int(2)])
        #expect(requests[2].attributes["network.protocol.version"] == .string("1.1"))
        #expect(requests[0].attributes["server.address"] == .string("scripted.test"))
        #expect(requests[0].attributes["server.port"] == .int(80))
        #expect(requests[2].attributes["url.full"] == .string(ScriptedHarness.url("moved.png").absoluteString))
        // What each request sent is its span's context: the caller's trace, the request's own span id.
        let sent = [first.request.urlRequest, second.request.urlRequest, redirected].map { $0.value(forHTTPHeaderField: "traceparent") }
        #expect(sent == requests.map { $0.context?.traceParent })
        #expect(requests.allSatisfy { $0.context?.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" })

        let decode = try #require(spans.first { $0.name == "image.decode" })
        #expect(decode.parent == download.context && decode.endCount == 1)
        #expect(decode.attributes["image.format"] == .string("png"))
    }

    /// A tracer whose spans carry no context: requests still carry the caller's trace, each with its own span id.
    @Test func aTracerWithoutContextsLeavesTheCallersTrace() async throws {
        final class Blind: ImageDownloaderTracer {
            final class Span: ImageDownloaderSpan {
                var context: ImageDownloaderTraceContext? { nil }
                func setAttribute(_ value: ImageDownloaderSpanAttribute, forKey key: String) {}
                func addLink(_ context: ImageDownloaderTraceContext) {}
                func recordError(_ error: any Error) {}
                func setStatus(_ status: ImageDownloaderSpanStatus) {}
                func end() {}
            }
            func startSpan(_ operationName: String, parent: ImageDownloaderTraceContext?, ofKind kind: ImageDownloaderSpanKind,
                           links: [ImageDownloaderTraceContext]) -> any ImageDownloaderSpan { Span() }
        }
        let harness = ScriptedHarness { $0.tracer = Blind() }
        let (recorder, _) = harness.download(context: ImageDownloaderContext(traceParent: Self.caller))
        let transfer = try #require(await harness.transport.transfer(0))
        let header = try #require(transfer.request.urlRequest.value(forHTTPHeaderField: "traceparent"))
        #expect(header.hasPrefix("00-4bf92f3577b34da6a3ce929d0e0e4736-") && header.hasSuffix("-01"))
        #expect(!header.contains("00f067aa0ba902b7"))
        transfer.respond(status: 404)
        await recorder.completion()
    }
}

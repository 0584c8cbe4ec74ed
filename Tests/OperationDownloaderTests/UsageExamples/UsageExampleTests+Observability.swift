import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OperationDownloader
import Testing
import TestRequirements
import UsageExamples

/// Docs/Observability.md's examples, run: a downloader wired to `PrometheusMetrics`, its text scraped over HTTP
/// from `MetricsEndpoint`, and a download under the caller's trace.
@Suite struct ObservabilityExampleTests {
    let server = FixtureServer.shared

    @Test func theEndpointServesWhatTheDownloaderReported() async throws {
        let metrics = PrometheusMetrics()
        let downloader = makeObservedDownloader(metrics: metrics)
        _ = try await downloader.image(for: server.url("/images/image.png?tag=\(newTag())"))
        let endpoint = try MetricsEndpoint(metrics: metrics)
        defer { endpoint.stop() }
        let (body, response) = try await fetch("http://127.0.0.1:\(endpoint.port)/metrics")
        #expect(response?.statusCode == 200)
        #expect(response?.value(forHTTPHeaderField: "Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(body.contains("od_downloads_total{result=\"success\",source=\"network\"} 1"), "\(body)")
        #expect(body.contains("# TYPE http_client_request_duration_seconds histogram"))
        let (_, missing) = try await fetch("http://127.0.0.1:\(endpoint.port)/other")
        #expect(missing?.statusCode == 404)
        if Requirement.promtool.isAvailable {
            let outcome = try Promtool.check(body)
            #expect(outcome.status == 0 && outcome.output.isEmpty, "\(outcome.output)")
        } else if Requirement.requireAll {
            Requirement.recordIfMissing(.promtool)
        }
    }

    @Test func theThumbnailCarriesTheCallersTrace() async throws {
        let tag = newTag()
        let trace = "0af7651916cd43dd8448eb211c80319c"
        let result = try await thumbnail(
            of: server.url("/images/image.png?tag=\(tag)"), tracedBy: "00-\(trace)-b7ad6b7169203331-01", traceState: "congo=t61",
            with: ImageDownloader(configuration: ImageDownloaderConfiguration()))
        #expect(result.image != nil)
        let header = try #require(server.requests(tag: tag).first?.headers["traceparent"])
        #expect(header.hasPrefix("00-\(trace)-") && header.hasSuffix("-01") && !header.contains("b7ad6b7169203331"))
        #expect(server.requests(tag: tag).first?.headers["tracestate"] == "congo=t61")
    }

    private func fetch(_ address: String) async throws -> (String, HTTPURLResponse?) {
        let result = await FixtureHTTPClient.shared.fetch(try #require(URL(string: address)), timeout: 30)
        if let error = result.error { throw error }
        return (String(decoding: result.data, as: UTF8.self), result.response)
    }
}

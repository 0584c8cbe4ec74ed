import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// A crawler's 10,000 distinct URLs on 10,000 distinct hosts, or on one host's 10,000 ports: the exposition stays
/// small. `server_address` and `server_port` take the first `metricsServerAddressLimit` servers (host and port),
/// `_other` without a port after; no label carries a URL or a path.
@Suite struct MetricCardinalityTests {
    /// Answers every request at once (off the caller's thread) with a 404 or a 410, by the URL's number.
    final class AnsweringTransport: DownloadTransport, Sendable {
        func makeTransfer(_ request: TransferRequest, client: any TransferClient) -> any TransportTransfer {
            AnsweringTransfer(request: request, client: client)
        }
        func invalidate(cancellingTransfers: Bool) {}
    }

    final class AnsweringTransfer: TransportTransfer, @unchecked Sendable {  // immutable; `client` weak
        let request: TransferRequest
        weak var client: (any TransferClient)?

        init(request: TransferRequest, client: any TransferClient) {
            self.request = request
            self.client = client
        }

        func resume() {
            DispatchQueue.global().async { [self] in
                guard let url = request.urlRequest.url, let client else { return }
                let number = Int(url.lastPathComponent.dropLast(4)) ?? 0
                let status = number % 2 == 0 ? 404 : 410
                if let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/plain"]) {
                    client.transfer(self, didReceive: response)
                }
                client.transfer(self, didCompleteWith: nil, metrics: TransferMetrics())
            }
        }

        func cancel() {}
        func suspendReading() {}
        func resumeReading() {}
        func setPriority(_ priority: Float) {}
    }

    /// Downloads every URL (each answered 404 or 410) through a downloader reporting to `sink`.
    private func downloadAll(_ urls: [URL], limit: Int = 100, into sink: PrometheusMetrics) async throws {
        var configuration = ImageDownloaderConfiguration()
        configuration.metricsSink = sink
        configuration.metricsServerAddressLimit = limit
        configuration.imageCache = nil
        configuration.maxConcurrentDownloads = 8
        configuration.callbackQueue = DispatchQueue(label: "cardinality.callbacks")
        let downloader = ImageDownloader(configuration: configuration, deadlineMonitor: .shared, transport: AnsweringTransport())
        let answered = Watched(0)
        for url in urls {
            downloader.downloadImage(url, options: [], context: nil, progress: nil) { _, _, _, finished in
                if finished { answered.withLock { $0 += 1 } }
            }
        }
        #expect(await answered.wait(timeout: 600) { $0 == urls.count })
        await awaitIdle(downloader)
    }

    @Test func tenThousandDistinctURLsMakeABoundedExposition() async throws {
        let sink = PrometheusMetrics()
        try await downloadAll((0..<10_000).map { i in
            try #require(URL(string: "http://host\(i).crawl.test:\(8000 + i % 3)/images/\(i).png?q=\(i)"))
        }, into: sink)
        let text = sink.exposition()
        let m = try Exposition(text)
        typealias N = ImageDownloaderMetricName
        let addresses = Set(m.series(N.requestDuration + "_count").compactMap { $0["server_address"] })
        #expect(addresses.count == 101 && addresses.contains("_other"))
        #expect(m.total(N.requestDuration + "_count") == 10_000)
        #expect(m.total(N.requestDuration + "_count", ["server_address": "_other"]) == 9_900)
        // Each of the first 100 hosts keeps its one port and status; _other has no port: 2 statuses.
        #expect(m.series(N.requestDuration + "_count").count == 100 + 2)
        #expect(m.series(N.activeRequests).count == 100 + 1)
        #expect(m.series(N.activeRequests).filter { $0["server_address"] == "_other" } == [["http_request_method": "GET", "server_address": "_other"]])
        #expect(m.value(N.downloadErrors, ["error_type": "404"]) == 5_000)
        #expect(m.value(N.downloadErrors, ["error_type": "410"]) == 5_000)
        // Every label value is from a bounded set: no URL, path or query anywhere.
        for sample in m.samples {
            for (label, value) in sample.labels {
                #expect(!value.contains("/") && !value.contains("?") && !value.contains("images"), "\(sample.name) \(label)=\(value)")
            }
        }
        #expect(m.samples.count < 3_000, "\(m.samples.count) samples")
        #expect(text.utf8.count < 400_000)
    }

    @Test func oneHostOnTenThousandPortsIsBoundedToo() async throws {
        let sink = PrometheusMetrics()
        try await downloadAll((0..<10_000).map { i in
            try #require(URL(string: "http://one.crawl.test:\(10_000 + i)/images/\(i).png"))
        }, limit: 10, into: sink)
        let m = try Exposition(sink.exposition())
        typealias N = ImageDownloaderMetricName
        let series = m.series(N.requestDuration + "_count")
        #expect(Set(series.compactMap { $0["server_port"] }).count == 10)
        #expect(series.filter { $0["server_address"] == "_other" }.allSatisfy { $0["server_port"] == nil })
        #expect(series.count == 10 + 2)
        #expect(m.series(N.activeRequests).count == 10 + 1)
        #expect(m.total(N.requestDuration + "_count", ["server_address": "_other"]) == 9_990)
    }

    @Test func theLimitIsTheConfigurations() {
        let labels = ServerAddressLabels(limit: 3)
        #expect(labels.label("a", port: 80) == "a")
        #expect(labels.label("b", port: 80) == "b")
        #expect(labels.label("a", port: 8080) == "a")
        #expect(labels.label("c", port: 80) == "_other")
        #expect(labels.label("a", port: 81) == "_other")
        #expect(labels.label("a", port: 80) == "a")
        #expect(labels.label("a", port: 8080) == "a")
        #expect(ServerAddressLabels(limit: 0).label("a", port: 80) == "_other")
    }
}

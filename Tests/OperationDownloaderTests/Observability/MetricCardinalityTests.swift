import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// A crawler's 10,000 distinct URLs on 10,000 distinct hosts: the exposition stays small. `server_address`
/// takes the first `metricsServerAddressLimit` hosts and `_other` after; no label carries a URL or a path.
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

    @Test func tenThousandDistinctURLsMakeABoundedExposition() async throws {
        let sink = PrometheusMetrics()
        var configuration = ImageDownloaderConfiguration()
        configuration.metricsSink = sink
        configuration.imageCache = nil
        configuration.maxConcurrentDownloads = 8
        configuration.callbackQueue = DispatchQueue(label: "cardinality.callbacks")
        let downloader = ImageDownloader(configuration: configuration, deadlineMonitor: .shared, transport: AnsweringTransport())
        let answered = Watched(0)
        for i in 0..<10_000 {
            let url = try #require(URL(string: "http://host\(i).crawl.test:\(8000 + i % 3)/images/\(i).png?q=\(i)"))
            downloader.downloadImage(url, options: [], context: nil, progress: nil) { _, _, _, finished in
                if finished { answered.withLock { $0 += 1 } }
            }
        }
        #expect(await answered.wait(timeout: 600) { $0 == 10_000 })
        await awaitIdle(downloader)
        let text = sink.exposition()
        let m = try Exposition(text)
        typealias N = ImageDownloaderMetricName
        let addresses = Set(m.series(N.requestDuration + "_count").compactMap { $0["server_address"] })
        #expect(addresses.count == 101 && addresses.contains("_other"))
        #expect(m.total(N.requestDuration + "_count") == 10_000)
        #expect(m.total(N.requestDuration + "_count", ["server_address": "_other"]) == 9_900)
        // Each host keeps its one port: at most 2 statuses × 3 ports for _other, 1 × 1 for the others.
        #expect(m.series(N.requestDuration + "_count").count <= 100 + 6)
        #expect(m.series(N.activeRequests).count <= 100 + 3)
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

    @Test func theLimitIsTheConfigurations() {
        let labels = ServerAddressLabels(limit: 2)
        #expect(labels.label("a") == "a")
        #expect(labels.label("b") == "b")
        #expect(labels.label("c") == "_other")
        #expect(labels.label("a") == "a")
        #expect(ServerAddressLabels(limit: 0).label("a") == "_other")
    }
}

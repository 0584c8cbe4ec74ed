import Foundation
import OperationDownloader
import Testing

/// `print(metrics)` and `print(metrics.source)` read as sentences, naming only what was measured (issue 26).
@Suite struct MetricsDescriptionTests {
    @Test func sourcesReadWell() {
        #expect("\(ImageDownloadMetrics.Source.network)" == "network")
        #expect("\(ImageDownloadMetrics.Source.httpCache)" == "HTTP cache")
        #expect("\(ImageDownloadMetrics.Source.revalidatedHTTPCache)" == "HTTP cache, revalidated (304)")
    }

    @Test func aCurlDownloadNamesItsConnection() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        var metrics = ImageDownloadMetrics(queuedAt: start)
        metrics.startedAt = start.addingTimeInterval(0.0002)
        metrics.responseAt = start.addingTimeInterval(0.0033)
        metrics.finishedAt = start.addingTimeInterval(0.0126)
        metrics.statusCode = 200
        metrics.receivedBytes = 30512
        metrics.expectedBytes = 30512
        metrics.httpVersion = "1.1"
        metrics.remoteAddress = "127.0.0.1"
        metrics.connectionReused = false
        metrics.connectDuration = 0.0002
        #expect(metrics.description == """
            network, status 200, HTTP/1.1, 30512 bytes in 12.4 ms (queued 0.2 ms, response after 3.1 ms), \
            127.0.0.1, new connection (connect 0.2 ms)
            """)
    }

    @Test func aRetriedFailureCountsItsAttemptsAndAStaleAnswerSaysSo() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        var failed = ImageDownloadMetrics(queuedAt: start)
        failed.startedAt = start
        failed.finishedAt = start.addingTimeInterval(1.314)
        failed.statusCode = 503
        failed.expectedBytes = 12
        failed.attemptCount = 3
        failed.redirectCount = 1
        #expect(failed.description == "network, status 503, 0 of 12 bytes in 1.31 s (queued 0.0 ms), 3 attempts, 1 redirect")

        var stale = ImageDownloadMetrics(queuedAt: start)
        stale.source = .httpCache
        stale.servedStale = true
        stale.receivedBytes = 10
        stale.expectedBytes = 10
        stale.connectionReused = true
        #expect(stale.description == "HTTP cache (stale), 10 bytes, reused connection")
    }
}

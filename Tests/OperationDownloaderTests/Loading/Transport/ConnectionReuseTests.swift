import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Issue 12, point 8: connections per host. The fixture server logs each request's client port, so requests
/// over one connection share a port.
///
/// With URLSession on Linux the bound holds only up to 4 downloads at once: corelibs never sets libcurl's
/// CURLMOPT_MAXCONNECTS, so libcurl sizes its connection cache at 4 × the transfers attached, and whenever a
/// transfer ends while it is the only one attached, the oldest idle connection beyond 4 is closed (the next
/// burst opens a new one). Docs/Linux.md has the measurements.
@Suite struct ConnectionReuseTests {
    let server = FixtureServer.shared

    /// Up to 4 at once, the cache never exceeds what libcurl keeps with a single transfer attached: every
    /// download reuses one of at most `maxConcurrentDownloads` connections, decoding or not.
    @Test(arguments: [ImageDownloaderOptions.avoidDecodeImage, []], TestTransports.all)
    func downloadsReuseAtMostMaxConcurrentConnections(
        options: ImageDownloaderOptions, _ transport: ImageDownloaderTransport
    ) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.maxConcurrentDownloads = 4 }
        let tag = newTag()
        let recorders = (0..<120).map { index in
            let recorder = DownloadRecorder()
            // Some slower responses, so that all four connections are in use at times.
            downloader.downloadImage(
                server.url("/images/image.png?tag=\(tag)&n=\(index)&delay_ms=\(index % 3 == 0 ? 20 : 1)"),
                options: options, completed: recorder.completed)
            return recorder
        }
        for recorder in recorders { await recorder.waitForCompletion(timeout: 120) }
        let log = await server.awaitRequests(tag: tag, count: recorders.count, finished: true)
        let connections = Set(log.compactMap(\.peerPort)).count
        #expect(recorders.allSatisfy { $0.final?.error == nil })
        #expect(connections <= 4, "\(connections) connections for \(log.count) requests")
        #expect(server.stats(tag: tag).maxConcurrency <= 4)
    }
}

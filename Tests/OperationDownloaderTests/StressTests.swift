import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Hundreds of mixed downloads and cancels: every completed handler runs exactly once with finished == true.
@Suite struct StressTests {
    let server = FixtureServer.shared

    @Test func everyHandlerRunsExactlyOnce() async throws {
        let (downloader, queue) = makeDownloader { $0.maxConcurrentDownloads = 6 }
        let tag = newTag()
        let paths = [
            "/images/tiny.png", "/images/image.png", "/status/404", "/status/500", "/empty", "/html",
            "/drip/image.png?chunk=8192&delay_ms=2", "/reset/image.png?after=1000", "/images/corrupt.jpg",
        ]
        let count = 400
        var recorders: [DownloadRecorder] = []
        var tokens: [ImageDownloadToken?] = []
        for index in 0..<count {
            let recorder = DownloadRecorder()
            recorders.append(recorder)
            let path = paths[index % paths.count]
            // A few URLs repeat (coalescing), most are distinct.
            let unique = index % 5 == 0 ? "shared\(index % 3)" : "u\(index)"
            let separator = path.contains("?") ? "&" : "?"
            let url: URL? = index % 37 == 0 ? nil : server.url(path + separator + "tag=\(tag)&k=\(unique)")
            let options: ImageDownloaderOptions = index % 4 == 0 ? .progressiveLoad : []
            tokens.append(downloader.downloadImage(url, options: options, progress: recorder.progress, completed: recorder.completed))
            if index % 7 == 3 { tokens[index]?.cancel() }
            if index % 11 == 5, index > 20 { tokens[index - 20]?.cancel() }
        }
        // Some more cancels while things run, and a cancel-all in the middle for a second batch.
        for index in stride(from: 1, to: count, by: 13) { tokens[index]?.cancel() }
        for recorder in recorders { await recorder.waitForCompletion(timeout: 90) }
        await drain(queue)
        try await Task.sleep(nanoseconds: 200_000_000)  // any duplicate would have arrived by now
        await drain(queue)
        let counts = recorders.map { $0.finals.count }
        #expect(counts.allSatisfy { $0 == 1 }, "final calls per caller: \(Dictionary(grouping: counts, by: { $0 }).mapValues(\.count))")
        #expect(recorders.allSatisfy { $0.events.last == "final" })
        let succeeded = recorders.filter { $0.final?.image != nil }.count
        let cancelled = recorders.filter { $0.downloaderError?.caseName == "cancelled" }.count
        #expect(succeeded > 50)
        #expect(cancelled > 20)
        #expect(await waitUntil { downloader.currentDownloadCount == 0 })

        // A second batch, cancelled wholesale.
        downloader.isSuspended = true
        let batch = (0..<100).map { index in
            let recorder = DownloadRecorder()
            downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&batch=\(index)"), completed: recorder.completed)
            return recorder
        }
        downloader.cancelAllDownloads()
        downloader.isSuspended = false
        for recorder in batch { await recorder.waitForCompletion() }
        await drain(queue)
        #expect(batch.allSatisfy { $0.finals.count == 1 && $0.downloaderError?.caseName == "cancelled" })
        #expect(await waitUntil { downloader.currentDownloadCount == 0 })
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Cancelling from the first progress callback races with the end of `start()` (found by the image-target
/// tests: the total-timeout timer was released without ever being resumed, which traps in libdispatch).
@Suite struct CancelDuringStartTests {
    let server = FixtureServer.shared

    @Test(arguments: TestTransports.all)
    func cancellingFromTheStartProgressCallbackNeverTraps(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let recorders = (0..<200).map { _ in DownloadRecorder() }
        for (index, recorder) in recorders.enumerated() {
            let token = Locked<ImageDownloadToken?>(nil)
            let progress = recorder.progress
            let created = downloader.downloadImage(
                server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\(index)"),
                progress: { received, expected, url in
                    progress(received, expected, url)
                    token.withLock { $0 }?.cancel()
                },
                completed: recorder.completed)
            token.withLock { $0 = created }
        }
        for recorder in recorders { await recorder.waitForCompletion() }
        #expect(recorders.allSatisfy { $0.finals.count == 1 && $0.downloaderError?.caseName == "cancelled" })
        #expect(await waitUntil { downloader.currentDownloadCount == 0 })
    }
}

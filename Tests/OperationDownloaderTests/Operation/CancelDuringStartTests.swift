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
            // The first progress call can come before `downloadImage` returns the token (the operation starts
            // on the queue at once): then the cancel is made as soon as the token is there.
            let slot = Locked<(token: ImageDownloadToken?, cancelWanted: Bool)>((nil, false))
            let progress = recorder.progress
            let created = downloader.downloadImage(
                server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\(index)"),
                progress: { received, expected, url in
                    progress(received, expected, url)
                    slot.withLock { s -> ImageDownloadToken? in
                        s.cancelWanted = true
                        return s.token
                    }?.cancel()
                },
                completed: recorder.completed)
            slot.withLock { s -> ImageDownloadToken? in
                s.token = created
                return s.cancelWanted ? created : nil
            }?.cancel()
        }
        for recorder in recorders { await recorder.waitForCompletion() }
        #expect(recorders.allSatisfy { $0.finals.count == 1 && $0.downloaderError?.caseName == "cancelled" })
        await awaitIdle(downloader)
    }
}

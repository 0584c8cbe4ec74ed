import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// maxConcurrentDownloads, FIFO/LIFO, priorities and suspension, observed at the server.
@Suite struct QueueOrderTests {
    let server = FixtureServer.shared

    private func startOrder(_ downloader: ImageDownloader, tag: String, count: Int,
                            options: (Int) -> ImageDownloaderOptions = { _ in [] }) async -> [String] {
        downloader.isSuspended = true
        let recorders = (0..<count).map { index in
            let recorder = DownloadRecorder()
            downloader.downloadImage(
                server.url("/images/tiny.png?tag=\(tag)&i=\(index)"), options: options(index), completed: recorder.completed)
            return recorder
        }
        #expect(server.stats(tag: tag).count == 0)
        downloader.isSuspended = false
        for recorder in recorders { await recorder.waitForCompletion() }
        #expect(recorders.allSatisfy { $0.final?.image != nil })
        return server.requests(tag: tag).map { $0.query["i"] ?? "?" }
    }

    @Test(arguments: TestTransports.all) func oneAtATime(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.maxConcurrentDownloads = 1 }
        let tag = newTag()
        let recorders = (0..<8).map { index in
            let recorder = DownloadRecorder()
            downloader.downloadImage(
                server.url("/drip/image.png?chunk=8192&delay_ms=5&tag=\(tag)&i=\(index)"), completed: recorder.completed)
            return recorder
        }
        for recorder in recorders { await recorder.waitForCompletion() }
        let stats = server.stats(tag: tag)
        #expect(stats.count == 8)
        #expect(stats.maxConcurrency == 1)
    }

    @Test(arguments: TestTransports.all) func fifoStartsInOrder(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.maxConcurrentDownloads = 1 }
        let order = await startOrder(downloader, tag: newTag(), count: 6)
        #expect(order == ["0", "1", "2", "3", "4", "5"])
    }

    @Test(arguments: TestTransports.all)
    func lifoStartsNewestFirst(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) {
            $0.maxConcurrentDownloads = 1
            $0.executionOrder = .lifo
        }
        let order = await startOrder(downloader, tag: newTag(), count: 6)
        #expect(order == ["5", "4", "3", "2", "1", "0"])
    }

    @Test(arguments: TestTransports.all)
    func highPriorityStartsFirst(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.maxConcurrentDownloads = 1 }
        let order = await startOrder(downloader, tag: newTag(), count: 3) { index in
            [.lowPriority, [], .highPriority][index]
        }
        #expect(order == ["2", "1", "0"])
    }

    @Test(arguments: TestTransports.all)
    func cancelledWhileQueuedNeverReachesTheServer(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.maxConcurrentDownloads = 1 }
        let tag = newTag()
        downloader.isSuspended = true
        let kept = DownloadRecorder(), cancelled = DownloadRecorder()
        let token = downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&i=0"), completed: cancelled.completed)
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&i=1"), completed: kept.completed)
        token?.cancel()
        await cancelled.waitForCompletion()
        #expect(cancelled.downloaderError?.caseName == "cancelled")
        downloader.isSuspended = false
        await kept.waitForCompletion()
        #expect(kept.final?.image != nil)
        #expect(server.requests(tag: tag).map { $0.query["i"] } == ["1"])
        await awaitIdle(downloader)
    }
}

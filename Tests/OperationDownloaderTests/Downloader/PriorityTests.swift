import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// Issue 12, point 2: `.highPriority` / `.lowPriority` reach the transfer (`URLSessionTask.priority` 0.75 /
/// 0.25), and a higher-priority caller joining raises it.
@Suite struct PriorityTests {
    let server = FixtureServer.shared

    @Test func priorityReachesTheTaskAndIsRaisedWhenAHigherCallerJoins() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let url = server.url("/hold/\(tag)/tiny.png?tag=\(tag)")
        let low = DownloadRecorder(), high = DownloadRecorder()
        let token = try #require(downloader.downloadImage(url, options: .lowPriority, completed: low.completed))
        await server.awaitRequests(tag: tag, count: 1)
        let task = try #require(await waitForTask(token.operation))
        #expect(task.priority == 0.25)
        downloader.downloadImage(url, options: .highPriority, completed: high.completed)
        #expect(task.priority == 0.75)
        #expect(token.operation.queuePriority == .high)
        server.release(tag)
        await low.waitForCompletion()
        await high.waitForCompletion()
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func aNormalCallerLeavesTheDefault() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let token = try #require(downloader.downloadImage(
            server.url("/hold/\(tag)/tiny.png?tag=\(tag)"), completed: DownloadRecorder().completed))
        await server.awaitRequests(tag: tag, count: 1)
        #expect(await waitForTask(token.operation)?.priority == 0.5)
        token.cancel()
        server.release(tag)
    }

    private func waitForTask(_ operation: any ImageDownloaderOperationProtocol) async -> URLSessionTask? {
        _ = await waitUntil { operation.dataTask != nil }
        return operation.dataTask
    }
}

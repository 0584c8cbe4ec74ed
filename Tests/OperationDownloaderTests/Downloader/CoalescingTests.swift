import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// One operation per URL in flight; each caller has its own token (AFNetworking receipts, SDWebImage tokens).
@Suite struct CoalescingTests {
    let server = FixtureServer.shared

    @Test(arguments: TestTransports.all)
    func manyCallersOfOneURLMakeOneRequest(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let recorders = (0..<20).map { _ in DownloadRecorder() }
        let tokens = recorders.map { downloader.downloadImage(url, completed: $0.completed) }
        #expect(tokens.allSatisfy { $0 != nil })
        #expect(downloader.currentDownloadCount == 1)
        server.release(tag)
        for recorder in recorders { await recorder.waitForCompletion() }
        #expect(recorders.allSatisfy { $0.finals.count == 1 && $0.final?.image?.width == 160 })
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func cancellingOneCallerLeavesTheOthersSucceeding(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let recorders = (0..<3).map { _ in DownloadRecorder() }
        let tokens = recorders.map { downloader.downloadImage(url, progress: $0.progress, completed: $0.completed) }
        // Wait until the request is at the server, so the cancel happens mid-download.
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        tokens[1]?.cancel()
        tokens[1]?.cancel()  // a second cancel is a no-op
        await recorders[1].waitForCompletion()
        #expect(recorders[1].downloaderError?.caseName == "cancelled")
        server.release(tag)
        await recorders[0].waitForCompletion()
        await recorders[2].waitForCompletion()
        await drain(queue)
        #expect(recorders[0].final?.image?.width == 160)
        #expect(recorders[2].final?.image?.width == 160)
        #expect(recorders.allSatisfy { $0.finals.count == 1 })
        // The cancelled caller got nothing after its cancellation answer.
        #expect(recorders[1].events.last == "final")
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func cancellingEveryCallerAbortsTheTransfer(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        // ~70 KB in 1 KB chunks every 2 s: minutes unless aborted, so even a test process whose async tasks are
        // starved by CPU-heavy decoding tests (the cooperative pool has one thread per core) sees the abort.
        let url = server.url("/drip/baseline.jpg?chunk=1024&delay_ms=2000&tag=\(tag)")
        let recorders = (0..<3).map { _ in DownloadRecorder() }
        let tokens = recorders.map { downloader.downloadImage(url, progress: $0.progress, completed: $0.completed) }
        await recorders[0].wait(timeout: 120) { $0.progress.contains { $0.0 > 0 } }
        for token in tokens { token?.cancel() }
        for recorder in recorders { await recorder.waitForCompletion() }
        #expect(recorders.allSatisfy { $0.finals.count == 1 && $0.downloaderError?.caseName == "cancelled" })
        // The server sees the client go away before the body was complete.
        #expect(await server.awaitRequests(tag: tag, count: 1, finished: true).first?.finished != nil)
        let logged = try #require(server.requests(tag: tag).first)
        #expect(logged.aborted == true)
        #expect((logged.bytesSent ?? 0) < 70522)
        await awaitIdle(downloader)
    }

    @Test(arguments: TestTransports.all)
    func aCancelledURLRequestedAgainDownloadsAfresh(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/tiny.png?tag=\(tag)")
        let first = DownloadRecorder()
        let token = downloader.downloadImage(url, completed: first.completed)
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        token?.cancel()
        let second = DownloadRecorder()
        let secondToken = downloader.downloadImage(url, completed: second.completed)
        #expect(secondToken != nil)
        #expect(secondToken !== token)
        server.release(tag)
        await first.waitForCompletion()
        await second.waitForCompletion()
        #expect(first.downloaderError?.caseName == "cancelled")
        #expect(second.final?.image?.width == 1)
        #expect(server.stats(tag: tag).count == 2)
    }

    @Test(arguments: TestTransports.all)
    func differentCacheIdentifiersDownloadSeparately(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/tiny.png?tag=\(tag)")
        let a = DownloadRecorder(), b = DownloadRecorder()
        downloader.downloadImage(url, context: ImageDownloaderContext(cacheIdentifier: "a"), completed: a.completed)
        downloader.downloadImage(url, context: ImageDownloaderContext(cacheIdentifier: "b"), completed: b.completed)
        server.release(tag)
        await a.waitForCompletion()
        await b.waitForCompletion()
        #expect(server.stats(tag: tag).count == 2)
    }

    /// Options that change the transfer give a caller a transfer of its own; a caller's own options (partial
    /// images, priority, its variant) share one (Docs/Options.md, "Per transfer or per caller").
    @Test(arguments: TestTransports.all)
    func transferOptionsSplitTheTransferAndCallerOptionsShareIt(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) { $0.httpCache = nil }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let plain = DownloadRecorder(), progressive = DownloadRecorder(), thumbnail = DownloadRecorder()
        let cookies = DownloadRecorder(), cached = DownloadRecorder()
        downloader.downloadImage(url, completed: plain.completed)
        downloader.downloadImage(url, options: [.progressiveLoad, .highPriority], completed: progressive.completed)
        downloader.downloadImage(url, context: .thumbnail(maxPixelSize: 40), completed: thumbnail.completed)
        downloader.downloadImage(url, options: .handleCookies, completed: cookies.completed)
        downloader.downloadImage(url, options: .useURLCache, completed: cached.completed)
        #expect(downloader.currentDownloadCount == 3)
        server.release(tag)
        for recorder in [plain, progressive, thumbnail, cookies, cached] { await recorder.waitForCompletion() }
        await drain(queue)
        #expect([plain, progressive, cookies, cached].allSatisfy { $0.finals.count == 1 && $0.final?.image?.width == 160 })
        #expect(thumbnail.final?.image?.width == 40)
        #expect(plain.partials.isEmpty && thumbnail.partials.isEmpty)
        #expect(server.stats(tag: tag).count == 3)
    }

    @Test(arguments: TestTransports.all)
    func callersOnTheirOwnCallbackQueues(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/tiny.png?tag=\(tag)")
        let queueA = DispatchQueue(label: "caller.a"), queueB = DispatchQueue(label: "caller.b")
        let keyA = DispatchSpecificKey<String>(), keyB = DispatchSpecificKey<String>()
        queueA.setSpecific(key: keyA, value: "a")
        queueB.setSpecific(key: keyB, value: "b")
        let seen = Locked<[String]>([])
        let done = Watched(0)
        downloader.downloadImage(url, context: ImageDownloaderContext(callbackQueue: queueA), completed: { _, _, _, finished in
            if finished { seen.withLock { $0.append(DispatchQueue.getSpecific(key: keyA) ?? "?") }; done.withLock { $0 += 1 } }
        })
        downloader.downloadImage(url, context: ImageDownloaderContext(callbackQueue: queueB), completed: { _, _, _, finished in
            if finished { seen.withLock { $0.append(DispatchQueue.getSpecific(key: keyB) ?? "?") }; done.withLock { $0 += 1 } }
        })
        server.release(tag)
        await done.wait { $0 == 2 }
        #expect(Set(seen.current) == ["a", "b"])
        #expect(server.stats(tag: tag).count == 1)
    }
}

/// A lock-protected value for test closures.
final class Locked<Value>: @unchecked Sendable {  // `lock` guards `value`
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    @discardableResult func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var current: Value { withLock { $0 } }
}

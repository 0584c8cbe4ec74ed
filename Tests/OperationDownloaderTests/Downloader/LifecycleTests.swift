import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Notifications, custom operation classes, memory cache, async cancellation, background tasks,
/// cancel-all and invalidation.
@Suite struct LifecycleTests {
    let server = FixtureServer.shared

    private func observeNotifications(tag: String) -> (Locked<[String]>, [any NSObjectProtocol]) {
        let names: [(Notification.Name, String)] = [
            (.imageDownloadStart, "start"), (.imageDownloadReceiveResponse, "response"),
            (.imageDownloadStop, "stop"), (.imageDownloadFinish, "finish"),
        ]
        let seen = Locked<[String]>([])
        let observers = names.map { name, label in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let operation = note.object as? any ImageDownloaderOperationProtocol,
                      operation.request?.url?.absoluteString.contains(tag) == true else { return }
                seen.withLock { $0.append(label) }
            }
        }
        return (seen, observers)
    }

    @Test(arguments: TestTransports.all)
    func notificationsArriveInOrder(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let (seen, observers) = observeNotifications(tag: tag)
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        _ = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"))
        await drain(queue)
        #expect(seen.current == ["start", "response", "stop", "finish"])

        let failedTag = newTag()
        let (failed, moreObservers) = observeNotifications(tag: failedTag)
        defer { moreObservers.forEach(NotificationCenter.default.removeObserver) }
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/status/404?tag=\(failedTag)"), completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(failed.current == ["start", "stop"])
    }

    /// The notifications come before the answer on the callback queue, whichever way the download ends:
    /// decoded on the coder queue, answered straight from the delegate queue (`.avoidDecodeImage`: one block
    /// carries stop, finish and the answer), or failed.
    @Test(arguments: [
        ("/images/tiny.png", ImageDownloaderOptions(), ["start", "response", "stop", "finish", "answer"]),
        ("/images/tiny.png", ImageDownloaderOptions.avoidDecodeImage, ["start", "response", "stop", "finish", "answer"]),
        ("/status/404", ImageDownloaderOptions.avoidDecodeImage, ["start", "stop", "answer"]),
    ], TestTransports.all)
    func notificationsPrecedeTheAnswer(
        _ example: (path: String, options: ImageDownloaderOptions, expected: [String]), _ transport: ImageDownloaderTransport
    ) async throws {
        let (path, options, expected) = example
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let (seen, observers) = observeNotifications(tag: tag)
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let recorder = DownloadRecorder()
        let record = recorder.completed
        downloader.downloadImage(server.url("\(path)?tag=\(tag)"), options: options, completed: { image, data, error, finished in
            if finished { seen.withLock { $0.append("answer") } }
            record(image, data, error, finished)
        })
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(seen.current == expected)
        #expect(recorder.finals.count == 1)
        #expect((recorder.final?.data?.isEmpty == false) == (path != "/status/404"))
    }

    @Test(arguments: TestTransports.all)
    func notificationsCanBeTurnedOff(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) { $0.postsNotifications = false }
        let tag = newTag()
        let (seen, observers) = observeNotifications(tag: tag)
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        _ = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"))
        let failed = DownloadRecorder()
        downloader.downloadImage(server.url("/status/404?tag=\(tag)"), options: .avoidDecodeImage, completed: failed.completed)
        await failed.waitForCompletion()
        // Per request, the context wins over the configuration.
        _ = try await downloader.image(
            for: server.url("/images/tiny.png?tag=\(tag)&again=1"), context: ImageDownloaderContext(postsNotifications: true))
        await drain(queue)
        #expect(failed.finals.count == 1)
        #expect(seen.current == ["start", "response", "stop", "finish"])
    }

    @Test(arguments: TestTransports.all)
    func customOperationClassIsUsed(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) { $0.operationClass = CountingOperation.self }
        let tag = newTag()
        let result = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"))
        #expect(result.image?.width == 1)
        #expect(CountingOperation.created.current.contains { $0.contains(tag) })
        // A subclass is told apart from the package's own class and still leaves the downloader's books.
        await awaitIdle(downloader)
    }

    @Test(arguments: TestTransports.all)
    func memoryCacheHitMakesNoRequest(_ transport: ImageDownloaderTransport) async throws {
        let cache = AutoPurgingImageCache()
        let (downloader, _) = makeDownloader(transport) { $0.imageCache = cache }
        let tag = newTag()
        let url = server.url("/images/tiny.png?tag=\(tag)")
        _ = try await downloader.image(for: url)
        #expect(cache.image(for: URLRequest(url: url), withAdditionalIdentifier: nil)?.width == 1)
        let recorder = DownloadRecorder()
        let token = downloader.downloadImage(url, completed: recorder.completed)
        #expect(token == nil)
        #expect(recorder.finals.count == 1)  // synchronously
        #expect(recorder.final?.image?.width == 1)
        #expect(server.stats(tag: tag).count == 1)

        // A reload policy skips the memory cache.
        var request = URLRequest(url: url)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let reload = DownloadRecorder()
        #expect(downloader.downloadImage(with: request, completed: reload.completed) != nil)
        await reload.waitForCompletion()
        #expect(server.stats(tag: tag).count == 2)
    }

    @Test(arguments: TestTransports.all)
    func imageForURLCancellationThrowsCancellationError(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/tiny.png?tag=\(tag)")
        let other = DownloadRecorder()
        downloader.downloadImage(url, completed: other.completed)
        let task = Task { try await downloader.image(for: url) }
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // The other caller of the same URL still gets its image.
        server.release(tag)
        await other.waitForCompletion()
        #expect(other.final?.image?.width == 1)
    }

    @Test(arguments: TestTransports.all)
    func alreadyCancelledTaskThrowsAtOnce(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await downloader.image(for: server.url("/hold/\(tag)/tiny.png?tag=\(tag)&max=5"))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test(arguments: TestTransports.all)
    func leavingTheEventStreamCancelsTheDownload(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/drip/baseline.jpg?chunk=1024&delay_ms=2000&tag=\(tag)")
        for try await event in downloader.events(for: url) {
            if case .progress(let received, _) = event, received > 0 { break }
        }
        #expect(await server.awaitRequests(tag: tag, count: 1, finished: true).first?.finished != nil)
        #expect(server.requests(tag: tag).first?.aborted == true)
        await awaitIdle(downloader)
    }

    @Test func backgroundTaskEndsWhenTheOperationFinishes() async throws {
        let provider = RecordingBackgroundTaskProvider()
        BackgroundTasks.provider = provider
        defer { BackgroundTasks.provider = nil }
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/hold/\(tag)/tiny.png?tag=\(tag)"), options: .continueInBackground, completed: recorder.completed)
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        // Running: begun and not yet ended (not ended at the end of start()).
        #expect(provider.begun.current.count == 1)
        #expect(provider.ended.current.isEmpty)
        server.release(tag)
        await recorder.waitForCompletion()
        await provider.ended.wait { $0.count == 1 }
        #expect(provider.ended.current == provider.begun.current)
    }

    @Test(arguments: TestTransports.all)
    func cancelAllDownloadsAnswersEveryCaller(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) { $0.maxConcurrentDownloads = 2 }
        let tag = newTag()
        let recorders = (0..<5).map { index in
            let recorder = DownloadRecorder()
            downloader.downloadImage(server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\(index)&max=120"), completed: recorder.completed)
            return recorder
        }
        #expect(await server.awaitRequests(tag: tag, count: 2).count == 2)
        downloader.cancelAllDownloads()
        for recorder in recorders { await recorder.waitForCompletion() }
        await drain(queue)
        #expect(recorders.allSatisfy { $0.finals.count == 1 && $0.downloaderError?.caseName == "cancelled" })
        server.release(tag)
        let next = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)&next=1"))
        #expect(next.image?.width == 1)
    }

    @Test(arguments: TestTransports.all)
    func invalidateCancellingPendingOperations(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) { $0.maxConcurrentDownloads = 1 }
        let tag = newTag()
        let recorders = (0..<4).map { index in
            let recorder = DownloadRecorder()
            downloader.downloadImage(server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\(index)&max=120"), completed: recorder.completed)
            return recorder
        }
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        downloader.invalidate(cancelPendingOperations: true)
        for recorder in recorders { await recorder.waitForCompletion() }
        await drain(queue)
        #expect(recorders.allSatisfy { $0.finals.count == 1 && $0.downloaderError?.caseName == "cancelled" })
        let late = DownloadRecorder()
        #expect(downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)"), completed: late.completed) == nil)
        #expect(late.downloaderError?.caseName == "invalidDownloadOperation")
        server.release(tag)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func invalidateLettingPendingOperationsFinish(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) { $0.maxConcurrentDownloads = 1 }
        let tag = newTag()
        let recorders = (0..<3).map { index in
            let recorder = DownloadRecorder()
            downloader.downloadImage(server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\(index)"), completed: recorder.completed)
            return recorder
        }
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        downloader.invalidate(cancelPendingOperations: false)
        server.release(tag)
        for recorder in recorders { await recorder.waitForCompletion() }
        await drain(queue)
        #expect(recorders.allSatisfy { $0.finals.count == 1 && $0.final?.image?.width == 1 })
        #expect(server.stats(tag: tag).count == 3)
    }

    @Test func standaloneOperationOwnsItsSession() async throws {
        let tag = newTag()
        let operation = ImageDownloaderOperation(
            request: URLRequest(url: server.url("/images/tiny.png?tag=\(tag)")), session: nil, options: [],
            context: ImageDownloaderContext(codersManager: .shared))
        let recorder = DownloadRecorder()
        #expect(operation.addHandlers(forProgress: recorder.progress, completed: recorder.completed) != nil)
        let finished = Watched(false)
        operation.completionBlock = { finished.withLock { $0 = true } }  // corelibs runs it once isFinished is set
        let queue = OperationQueue()
        queue.addOperation(operation)
        await recorder.waitForCompletion()
        #expect(recorder.final?.image?.width == 1)
        await finished.wait { $0 }
        #expect(operation.isFinished)
        #expect(!operation.isExecuting)
        #expect(operation.dataTask == nil)  // released before finishing
        // A finished operation refuses new callers: it is never reused.
        #expect(operation.addHandlers(forProgress: nil, completed: nil) == nil)
    }

    @Test func operationCancelledBeforeStartFinishesWhenStarted() async throws {
        let operation = ImageDownloaderOperation(
            request: URLRequest(url: server.url("/images/tiny.png?tag=\(newTag())")), session: nil, options: [],
            context: nil)
        let recorder = DownloadRecorder()
        let token = operation.addHandlers(forProgress: nil, completed: recorder.completed)
        operation.cancel()
        #expect(!operation.isFinished)  // never finished before start
        #expect(operation.cancel(token) == false)  // already answered
        let finished = Watched(false)
        operation.completionBlock = { finished.withLock { $0 = true } }  // corelibs runs it once isFinished is set
        let queue = OperationQueue()
        queue.addOperation(operation)
        await finished.wait { $0 }
        #expect(operation.isFinished)
        await recorder.waitForCompletion()
        #expect(recorder.finals.count == 1)
        #expect(recorder.downloaderError?.caseName == "cancelled")
    }
}

/// A custom operation class: records the URLs it was created for.
final class CountingOperation: ImageDownloaderOperation, @unchecked Sendable {  // adds only a static, lock-guarded log
    static let created = Locked<[String]>([])

    required init(request: URLRequest, session: URLSession?, options: ImageDownloaderOptions, context: ImageDownloaderContext?) {
        Self.created.withLock { $0.append(request.url?.absoluteString ?? "") }
        super.init(request: request, session: session, options: options, context: context)
    }
}

/// Records begin/end calls.
final class RecordingBackgroundTaskProvider: BackgroundTaskProvider {
    let begun = Locked<[Int]>([])
    let ended = Watched<[Int]>([])
    private let next = Locked(100)

    func beginBackgroundTask(expiration: @escaping @Sendable () -> Void) -> Int? {
        let id = next.withLock { value -> Int in
            value += 1
            return value
        }
        begun.withLock { $0.append(id) }
        return id
    }

    func endBackgroundTask(_ identifier: Int) {
        ended.withLock { $0.append(identifier) }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// `ImagePrefetcher` (Docs/Options.md) against the fixture server: its concurrency limit seen at the server, counts and
/// exactly-once completion, cancel, cached URLs without requests, joining downloads in flight, lifetime.
@Suite struct ImagePrefetcherTests {
    let server = FixtureServer.shared

    private func heldURLs(_ tag: String, count: Int, file: String = "tiny.png") -> [URL] {
        (0..<count).map { server.url("/hold/\(tag)/\(file)?tag=\(tag)&i=\($0)") }
    }

    @Test func neverMoreThanMaxConcurrentPrefetchCountInFlight() async throws {
        let (downloader, _) = makeDownloader { $0.maxConcurrentDownloads = 6 }
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 3)
        let tag = newTag()
        let recorder = PrefetchRecorder()
        prefetcher.prefetch(heldURLs(tag, count: 12), progress: recorder.progress, completed: recorder.completed)
        // Three requests held at the server, and no more handed to the downloader (which would take six).
        await server.awaitRequests(tag: tag, count: 3)
        #expect(downloader.currentDownloadCount == 3)
        #expect(prefetcher.prefetchingCount == 3)
        server.release(tag)
        await recorder.waitForCompletion()
        #expect(recorder.result == "12/0")
        let stats = server.stats(tag: tag)
        #expect(stats.count == 12)
        #expect(stats.maxConcurrency <= 3, "the server saw \(stats.maxConcurrency) prefetch requests at once")
        #expect(prefetcher.peakPrefetchingCount == 3)
        // Progress after each URL, in order, ending at the total; completion last.
        #expect(recorder.progressList.map(\.finished) == Array(1...12))
        #expect(recorder.progressList.allSatisfy { $0.total == 12 })
        #expect(recorder.eventList.last == "completed")
        #expect(recorder.eventList.filter { $0 == "completed" }.count == 1)
    }

    @Test func skippedCountsWhatDidNotSucceed() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 2)
        let tag = newTag()
        let urls = [
            server.url("/images/tiny.png?tag=\(tag)"), server.url("/status/404?tag=\(tag)"),
            server.url("/images/image.png?tag=\(tag)"), server.url("/html?tag=\(tag)"),
            URL(string: "ftp://127.0.0.1/never.png")!,  // not loadable: answered at once, no request
        ]
        let recorder = PrefetchRecorder()
        prefetcher.prefetch(urls, progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.result == "5/3")
        #expect(server.stats(tag: tag).count == 4)
        // The successes are in the memory cache: the downloader answers them without a request.
        let cache = try #require(downloader.configuration.imageCache)
        #expect(cache.image(for: URLRequest(url: urls[0]), withAdditionalIdentifier: nil)?.width == 1)
        #expect(cache.image(for: URLRequest(url: urls[2]), withAdditionalIdentifier: nil)?.width == 160)
    }

    @Test func cachedURLsCountAsFinishedWithoutARequest() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader)
        let tag = newTag()
        let urls = (0..<5).map { server.url("/images/tiny.png?tag=\(tag)&i=\($0)") }
        let first = await prefetcher.prefetchAndWait(urls)
        #expect(first.finished == 5 && first.skipped == 0)
        #expect(server.stats(tag: tag).count == 5)

        let again = PrefetchRecorder()
        prefetcher.prefetch(urls + urls, progress: again.progress, completed: again.completed)
        await again.waitForCompletion()
        #expect(again.result == "10/0")
        #expect(again.progressList.map(\.finished) == Array(1...10))
        #expect(server.stats(tag: tag).count == 5, "a cached URL was requested again")
    }

    @Test func cancellingMidwayAnswersOnceAndRequestsNothingMore() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 2)
        let tag = newTag()
        let recorder = PrefetchRecorder()
        let urls = heldURLs(tag, count: 10)
        let token = prefetcher.prefetch(urls, progress: recorder.progress, completed: recorder.completed)
        #expect(token.urls == urls)
        await server.awaitRequests(tag: tag, count: 2)
        token.cancel()
        token.cancel()
        await recorder.waitForCompletion()
        #expect(recorder.result == "10/10")
        #expect(recorder.progressList.last?.finished == 10)
        #expect(recorder.progressList.map(\.finished) == recorder.progressList.map(\.finished).sorted())
        // Nothing was requested after the cancel; the two held requests were abandoned by the client.
        server.release(tag)
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(log.count == 2)
        #expect(server.stats(tag: tag).count == 2)
        #expect(prefetcher.prefetchingCount == 0)
        token.cancel()  // after completion: nothing
        #expect(recorder.completionList.count == 1)
    }

    @Test func cancelPrefetchingCancelsEveryPrefetch() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 1)
        let tag = newTag()
        let first = PrefetchRecorder(), second = PrefetchRecorder()
        prefetcher.prefetch(heldURLs(tag, count: 3), completed: first.completed)
        prefetcher.prefetch([server.url("/images/tiny.png?tag=\(tag)&second=1")], completed: second.completed)
        await server.awaitRequests(tag: tag, count: 1)
        prefetcher.cancelPrefetching()
        await first.waitForCompletion()
        await second.waitForCompletion()
        #expect(first.result == "3/3")
        #expect(second.result == "1/1")  // never started: its run waited behind the first
        server.release(tag)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func aURLAlreadyDownloadingIsJoinedNotRequestedTwice() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let user = DownloadRecorder()
        downloader.downloadImage(url, completed: user.completed)
        let recorder = PrefetchRecorder()
        prefetcher.prefetch([url], completed: recorder.completed)
        #expect(downloader.currentDownloadCount == 1)
        server.release(tag)
        await recorder.waitForCompletion()
        await user.waitForCompletion()
        #expect(recorder.result == "1/0")
        #expect(user.final?.image?.width == 160)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func cancellingAPrefetchLeavesAJoinedUserDownloadAlone() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let recorder = PrefetchRecorder()
        let token = prefetcher.prefetch([url], completed: recorder.completed)
        let user = DownloadRecorder()
        downloader.downloadImage(url, completed: user.completed)
        await server.awaitRequests(tag: tag, count: 1)
        token.cancel()
        await recorder.waitForCompletion()
        #expect(recorder.result == "1/1")
        server.release(tag)
        await user.waitForCompletion()
        #expect(user.final?.image?.width == 160)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func prefetchesRunAtLowPriorityByDefault() async throws {
        let (downloader, _) = makeDownloader { $0.maxConcurrentDownloads = 1 }
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 2)
        #expect(prefetcher.options == [.lowPriority])
        let tag = newTag()
        downloader.isSuspended = true
        let recorder = PrefetchRecorder()
        prefetcher.prefetch((0..<2).map { server.url("/images/tiny.png?tag=\(tag)&i=p\($0)") }, completed: recorder.completed)
        let user = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&i=user"), completed: user.completed)
        downloader.isSuspended = false
        await user.waitForCompletion()
        await recorder.waitForCompletion()
        // Queued later, started first.
        #expect(server.requests(tag: tag).first?.query["i"] == "user")
    }

    @Test func theHTTPCacheIsFilledWithUseURLCache() async throws {
        let directory = TemporaryCacheDirectory()
        defer { directory.remove() }
        let httpCache = HTTPImageCache(directory: directory.url)
        let (downloader, _) = makeDownloader { $0.httpCache = httpCache }
        let prefetcher = ImagePrefetcher(downloader: downloader, options: [.lowPriority, .useURLCache])
        let tag = newTag()
        let url = server.url("/images/tiny.png?cc=max-age%3D3600&tag=\(tag)")
        let outcome = await prefetcher.prefetchAndWait([url])
        #expect(outcome.finished == 1 && outcome.skipped == 0)
        // Another downloader with no memory cache but the same HTTP cache: served without a request.
        let (other, _) = makeDownloader {
            $0.httpCache = httpCache
            $0.imageCache = nil
        }
        let result = try await other.image(for: url, options: .useURLCache)
        #expect(result.image?.width == 1)
        #expect(result.metrics?.source == .httpCache)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func workInFlightKeepsThePrefetcherAliveUntilItEnds() async throws {
        let (downloader, callbacks) = makeDownloader()
        let tag = newTag()
        let recorder = PrefetchRecorder()
        let released: WeakReference<ImagePrefetcher>
        do {
            let prefetcher = ImagePrefetcher(downloader: downloader)
            released = WeakReference(prefetcher)
            prefetcher.prefetch(heldURLs(tag, count: 4), completed: recorder.completed)
        }
        #expect(released.value != nil, "the prefetcher went away with work in flight")
        server.release(tag)
        await recorder.waitForCompletion()
        #expect(recorder.result == "4/0")
        // The last download's callback (which delivered the completion) has returned; the finishing operation lets
        // go of its callers' closures as its `finish` returns, on its own thread (a moment later under TSan).
        await drain(callbacks)
        #expect(await waitUntil(timeout: 30) { released.value == nil }, "the prefetcher outlived its work")
    }

    @Test func anInvalidatedDownloaderSkipsEverything() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 2)
        let tag = newTag()
        let recorder = PrefetchRecorder()
        prefetcher.prefetch(heldURLs(tag, count: 6), completed: recorder.completed)
        await server.awaitRequests(tag: tag, count: 2)
        downloader.invalidate(cancelPendingOperations: true)
        await recorder.waitForCompletion()
        #expect(recorder.result == "6/6")
        let later = await prefetcher.prefetchAndWait(heldURLs(tag, count: 3))
        #expect(later.finished == 3 && later.skipped == 3)
        server.release(tag)
        #expect(server.stats(tag: tag).count == 2)
    }

    @Test func anEmptyListCompletesOnce() async {
        let (downloader, _) = makeDownloader()
        let recorder = PrefetchRecorder()
        ImagePrefetcher(downloader: downloader).prefetch([], progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.result == "0/0")
        #expect(recorder.progressList.isEmpty)
    }

    @Test func cancellingTheWaitingTaskCancelsThePrefetch() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 1)
        let tag = newTag()
        let urls = heldURLs(tag, count: 3)
        let task = Task { await prefetcher.prefetchAndWait(urls) }
        await server.awaitRequests(tag: tag, count: 1)
        task.cancel()
        let outcome = await task.value
        #expect(outcome.finished == 3 && outcome.skipped == 3)
        server.release(tag)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func handlersRunOnTheContextQueue() async throws {
        let (downloader, _) = makeDownloader()
        let queue = DispatchQueue(label: "prefetch.handlers")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let prefetcher = ImagePrefetcher(downloader: downloader, context: ImageDownloaderContext(callbackQueue: queue))
        let onQueue = Locked<[Bool]>([])
        let recorder = PrefetchRecorder()
        let tag = newTag()
        prefetcher.prefetch(
            [server.url("/images/tiny.png?tag=\(tag)"), URL(string: "ftp://127.0.0.1/x.png")!],
            progress: { finished, total in
                onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == 7) }
                recorder.progress(finished, total)
            },
            completed: { finished, skipped in
                onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == 7) }
                recorder.completed(finished, skipped)
            })
        await recorder.waitForCompletion()
        #expect(recorder.result == "2/1")
        #expect(onQueue.current == [true, true, true])
    }

    /// Many prefetches from many threads, cancelled at random moments: each completes exactly once with every
    /// URL counted, and the limit holds (TSan runs this suite in CI).
    @Test func concurrentPrefetchesAndCancelsEachCompleteOnce() async throws {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 4)
        let tag = newTag()
        let recorders = (0..<24).map { _ in PrefetchRecorder() }
        await withTaskGroup(of: Void.self) { group in
            for (index, recorder) in recorders.enumerated() {
                group.addTask {
                    let urls = (0..<5).map { i -> URL in
                        i == 4 ? URL(string: "ftp://127.0.0.1/\(index).png")!
                               : server.url("/images/tiny.png?tag=\(tag)&r=\(index)&i=\(i % 3)")
                    }
                    let token = prefetcher.prefetch(urls, progress: recorder.progress, completed: recorder.completed)
                    if index % 3 == 0 { token.cancel() }
                    if index == 11 { prefetcher.cancelPrefetching() }
                }
            }
        }
        for recorder in recorders { await recorder.waitForCompletion() }
        for recorder in recorders {
            #expect(recorder.completionList.count == 1)
            #expect(recorder.completionList.first?.finished == 5)
            #expect(recorder.eventList.last == "completed")
        }
        #expect(prefetcher.peakPrefetchingCount <= 4)
        #expect(prefetcher.prefetchingCount == 0)
        #expect(server.stats(tag: tag).maxConcurrency <= 4)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Warms the downloader's caches ahead of need (SDWebImage's `SDWebImagePrefetcher`, Nuke's `ImagePrefetcher`).
///
/// Each URL is downloaded through the downloader, so a result lands in its memory cache (and, with
/// `.useURLCache` in `options`, in its HTTP cache), a URL already downloading is joined instead of requested
/// twice, and a URL already in the memory cache counts as finished without any request. At most
/// `maxConcurrentPrefetchCount` URLs of this prefetcher are in flight at once, across all its `prefetch` calls
/// (oldest call first); the downloader's own limit applies beneath. Downloads run with `.lowPriority` by
/// default, so the user's own downloads start first.
///
/// Handlers run on the context's `callbackQueue`, else the downloader's configured one, else a private serial
/// queue (the main queue on Apple platforms), in order: `progress` after each URL, then `completed` exactly
/// once per `prefetch` call, also after a cancel. Work in flight keeps the prefetcher alive until it ends.
public final class ImagePrefetcher: @unchecked Sendable {  // `lock` guards `scheduler`
    /// The downloader every URL goes through.
    public let downloader: ImageDownloader
    /// At most this many URLs in flight at once (at least 1).
    public let maxConcurrentPrefetchCount: Int
    /// The options of every download (default `.lowPriority`).
    public let options: ImageDownloaderOptions
    /// The context of every download (its `cacheIdentifier` selects the memory-cache entry that is filled).
    public let context: ImageDownloaderContext?

    private let lock = NSLock()
    private var scheduler: PrefetchScheduler
    private let deliveryQueue: DispatchQueue

    /// Creates a prefetcher over `downloader` (nothing is requested until `prefetch`).
    public init(downloader: ImageDownloader = .shared, maxConcurrentPrefetchCount: Int = 3,
                options: ImageDownloaderOptions = [.lowPriority], context: ImageDownloaderContext? = nil) {
        self.downloader = downloader
        self.maxConcurrentPrefetchCount = max(1, maxConcurrentPrefetchCount)
        self.options = options
        self.context = context
        scheduler = PrefetchScheduler(limit: maxConcurrentPrefetchCount)
        deliveryQueue = context?.callbackQueue ?? downloader.configuration.callbackQueue
            ?? ImageDownloader.makeDefaultCallbackQueue(label: "OperationDownloader.ImagePrefetcher")
    }

    /// Downloads `urls` into the caches, at most `maxConcurrentPrefetchCount` at a time.
    ///
    /// - Parameters:
    ///   - progress: after each URL ends: how many of this call's URLs ended so far (in any way), and how many
    ///     there are. A cancel that ends many URLs at once reports once.
    ///   - completed: once, when every URL ended: `finished` is `urls.count`; `skipped` counts the URLs that did
    ///     not succeed (failed, cancelled, or never started because of a cancel).
    /// - Returns: a token that cancels this call alone.
    @discardableResult
    public func prefetch(
        _ urls: [URL], progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil,
        completed: (@Sendable (_ finished: Int, _ skipped: Int) -> Void)? = nil
    ) -> ImagePrefetchToken {
        let id: UInt64 = lock.withLock {
            let (id, events) = scheduler.add(urls, progress: progress, completed: completed)
            deliver(events)
            return id
        }
        pump()
        return ImagePrefetchToken(prefetcher: self, id: id, urls: urls)
    }

    /// Cancels every prefetch of this prefetcher (each `completed` handler still runs once).
    public func cancelPrefetching() {
        // Every run is closed in one critical section: a slot freed by the first cancelled download must not
        // start a URL of a run that is about to be cancelled.
        let tokens: [ImageDownloadToken] = lock.withLock {
            var tokens: [ImageDownloadToken] = []
            for id in scheduler.activeRunIDs {
                let (cancelled, events) = scheduler.cancel(id)
                tokens += cancelled
                deliver(events)
            }
            return tokens
        }
        for token in tokens { token.cancel() }
    }

    /// URLs of this prefetcher in flight now.
    public var prefetchingCount: Int { lock.withLock { scheduler.inFlight } }

    /// The most URLs that were ever in flight at once (for tests).
    var peakPrefetchingCount: Int { lock.withLock { scheduler.peakInFlight } }

    // MARK: - Internals

    func cancel(_ id: UInt64) {
        let tokens: [ImageDownloadToken] = lock.withLock {
            let (tokens, events) = scheduler.cancel(id)
            deliver(events)
            return tokens
        }
        // Their `.cancelled` answers end the slots (and may complete the run).
        for token in tokens { token.cancel() }
    }

    /// Starts jobs while slots and URLs are left. Only one thread starts at a time; the others return at once and
    /// the starting thread sees their freed slots on its next turn. The downloader is called outside the lock.
    private func pump() {
        guard lock.withLock({ scheduler.beginPumping() }) else { return }
        while let job = lock.withLock({ scheduler.nextJob() }) {
            start(job)
        }
    }

    private func start(_ job: PrefetchScheduler.Job) {
        // The completion keeps `self` alive while the download is in flight. A memory-cache hit, an invalid URL
        // or an invalidated downloader answers inside this call: `ended` then runs before `started`.
        let token = downloader.downloadImage(job.url, options: options, context: context, progress: nil) { [self] _, _, error, finished in
            guard finished else { return }  // partial images (.progressiveLoad) are not the end
            downloader.resources.telemetry?.prefetchEnded(error: error)  // [Observability] od_prefetch_urls_total
            ended(job, succeeded: error == nil)
        }
        let cancelNow = lock.withLock { scheduler.started(job, token: token) }
        if cancelNow { token?.cancel() }
    }

    private func ended(_ job: PrefetchScheduler.Job, succeeded: Bool) {
        lock.withLock { deliver(scheduler.ended(job, succeeded: succeeded)) }
        pump()
    }

    /// Under `lock`: queues the events on the delivery queue, so that they keep the order the scheduler gave them
    /// (no user code runs here; the handlers run later, on the queue).
    private func deliver(_ events: [PrefetchScheduler.Event]) {
        for event in events {
            switch event {
            case .progress(let handler, let finished, let total):
                deliveryQueue.async { handler(finished, total) }
            case .completed(let handler, let finished, let skipped):
                deliveryQueue.async { handler(finished, skipped) }
            }
        }
    }
}

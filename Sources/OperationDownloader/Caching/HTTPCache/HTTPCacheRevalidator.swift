import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Starts the background revalidation of a stale response that was served at once (stale-while-revalidate).
///
/// The cache does not own a network stack: the downloader supplies one of these (in the operation's context)
/// that starts a low-priority download of the same request with `.reloadRevalidatingCacheData`, through the
/// downloader's own queue, transport and operation (so the conditional request, the 304 refresh or the new
/// 200 are handled by the same code as any download, and `invalidate` stops it like any download). The cache
/// keeps one revalidation per entry file in flight (`HTTPImageCache.claimRevalidation(of:)`).
struct HTTPCacheRevalidator: Sendable {
    /// Starts revalidating `request` (the request as the caller's download built it) in `cache`; `handleCookies`
    /// carries the caller's `.handleCookies`. Returns whether it started. `done` runs exactly once either way
    /// (possibly before this returns), when the revalidation has ended whatever its outcome.
    let start: @Sendable (_ request: URLRequest, _ cache: HTTPImageCache, _ handleCookies: Bool,
                          _ done: @escaping @Sendable () -> Void) -> Bool

    /// Revalidations through `downloader` (held weakly: a revalidation never keeps a downloader alive).
    static func downloader(_ downloader: ImageDownloader) -> HTTPCacheRevalidator {
        HTTPCacheRevalidator { [weak downloader] request, cache, handleCookies, done in
            guard let downloader else {
                done()
                return false
            }
            return downloader.revalidateInBackground(request, cache: cache, handleCookies: handleCookies, done: done)
        }
    }
}

extension HTTPCacheRevalidator {
    /// Revalidations for an operation made without a downloader (`ImageDownloaderOperation(request:session:...)`
    /// run by the caller): another operation of the same class on the same session, run on a queue of its own,
    /// with a handler that ends the claim. The stale answer is the caller's at once, as with a downloader.
    static func standalone(operationClass: ImageDownloaderOperation.Type, session: URLSession?) -> HTTPCacheRevalidator {
        HTTPCacheRevalidator { request, cache, handleCookies, done in
            var revalidation = request
            revalidation.cachePolicy = .reloadRevalidatingCacheData
            var context = ImageDownloaderContext()
            context.httpCache = cache
            context.postsNotifications = false
            var options = ImageDownloader.revalidationOptions
            if handleCookies { options.insert(.handleCookies) }
            let operation = operationClass.init(request: revalidation, session: session, options: options, context: context)
            _ = operation.addHandlers(forProgress: nil) { _, _, _, finished in
                if finished { done() }
            }
            standaloneRevalidations.addOperation(operation)
            return true
        }
    }

    /// Where standalone operations' background revalidations run (a few at a time, at low priority).
    private static let standaloneRevalidations: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "OperationDownloader.HTTPImageCache.revalidations"
        queue.maxConcurrentOperationCount = 2
        queue.qualityOfService = .utility
        return queue
    }()
}

extension ImageDownloader {
    /// Options of a background revalidation: no decoding (only the cache wants the bytes), low priority.
    static let revalidationOptions: ImageDownloaderOptions = [.useURLCache, .avoidDecodeImage, .lowPriority]
    /// Keeps background revalidations apart from the callers' downloads of the same URL (coalescing key).
    static let revalidationIdentifier = "\u{1F}OperationDownloader.httpCacheRevalidation"

    /// A download nobody waits for: `request` again with `.reloadRevalidatingCacheData` (always a conditional
    /// request), the request modifier not applied a second time, no notifications. It goes through this
    /// downloader's queue, so `invalidate` refuses or cancels it like any other download.
    func revalidateInBackground(_ request: URLRequest, cache: HTTPImageCache, handleCookies: Bool,
                                done: @escaping @Sendable () -> Void) -> Bool {
        var revalidation = request
        revalidation.cachePolicy = .reloadRevalidatingCacheData
        var context = ImageDownloaderContext()
        context.httpCache = cache
        context.cacheIdentifier = Self.revalidationIdentifier
        context.postsNotifications = false
        context.requestModifier = ImageDownloaderRequestModifierBlock { $0 }
        var options = Self.revalidationOptions
        if handleCookies { options.insert(.handleCookies) }
        // `download`, not `downloadImage`: the configuration's `defaultOptions` are for the callers' downloads
        // (a default `.highPriority` or `.progressiveLoad` has no business in a background revalidation).
        let token = download(revalidation, plain: false, options: options, context: context, progress: nil) {
            _, _, _, finished in
            if finished { done() }
        }
        return token != nil
    }
}

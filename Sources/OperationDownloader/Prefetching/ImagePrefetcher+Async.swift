import Foundation

extension ImagePrefetcher {
    /// Prefetches `urls` and returns when every one has ended: `finished` is `urls.count`, `skipped` counts those
    /// that did not succeed. Cancelling the calling Task cancels this prefetch (the counts then include it).
    public func prefetchAndWait(
        _ urls: [URL], progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil
    ) async -> (finished: Int, skipped: Int) {
        let holder = PrefetchTokenHolder()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<(finished: Int, skipped: Int), Never>) in
                let token = prefetch(urls, progress: progress) { finished, skipped in
                    continuation.resume(returning: (finished, skipped))
                }
                holder.set(token)
            }
        } onCancel: {
            holder.cancel()
        }
    }
}

/// Hands the token to a cancellation handler that may run before the token exists.
private final class PrefetchTokenHolder: @unchecked Sendable {  // `lock` guards `token` and `cancelled`
    private let lock = NSLock()
    private var token: ImagePrefetchToken?
    private var cancelled = false

    func set(_ token: ImagePrefetchToken) {
        let cancelNow: Bool = lock.withLock {
            self.token = token
            return cancelled
        }
        if cancelNow { token.cancel() }
    }

    func cancel() {
        let token: ImagePrefetchToken? = lock.withLock {
            cancelled = true
            return self.token
        }
        token?.cancel()
    }
}

import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ImageDownloader {
    /// Downloads and decodes `url`. Cancelling the calling Task cancels this caller's token (other callers of
    /// the same URL continue) and throws `CancellationError`; download failures throw `ImageDownloaderError`.
    public func image(
        for url: URL, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil
    ) async throws -> ImageDownloadResult {
        let holder = TokenHolder()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ImageDownloadResult, any Error>) in
                let token = downloadImage(url, options: options, context: context, progress: nil) { image, data, error, finished in
                    guard finished else { return }
                    if let error {
                        if case ImageDownloaderError.cancelled = error, holder.taskCancelled {
                            continuation.resume(throwing: CancellationError())
                        } else {
                            continuation.resume(throwing: error)
                        }
                        return
                    }
                    holder.withToken { token in
                        continuation.resume(returning: ImageDownloadResult(
                            image: image, data: data ?? Data(), response: token?.response as? HTTPURLResponse,
                            metrics: token?.metrics))
                    }
                }
                holder.set(token)
            }
        } onCancel: {
            holder.cancel()
        }
    }

    /// Downloads `url` as a stream: progress, partial images (with `.progressiveLoad`), then `.completed`.
    /// Ending the stream early (the consuming Task cancelled, or the loop left) cancels this caller's token.
    public func events(
        for url: URL, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil
    ) -> AsyncThrowingStream<ImageDownloadEvent, any Error> {
        AsyncThrowingStream { continuation in
            let holder = TokenHolder()
            let token = downloadImage(
                url, options: options, context: context,
                progress: { received, expected, _ in
                    continuation.yield(.progress(received: received, expected: expected))
                },
                completed: { image, data, error, finished in
                    guard finished else {
                        if let image { continuation.yield(.partialImage(image)) }
                        return
                    }
                    if let error {
                        continuation.finish(throwing: error)
                        return
                    }
                    holder.withToken { token in
                        continuation.yield(.completed(ImageDownloadResult(
                            image: image, data: data ?? Data(), response: token?.response as? HTTPURLResponse,
                            metrics: token?.metrics)))
                        continuation.finish()
                    }
                })
            holder.set(token)
            continuation.onTermination = { termination in
                if case .cancelled = termination { holder.cancel() }
            }
        }
    }
}

/// Hands a token to a cancellation handler that may run before the token exists (Task already cancelled
/// when the download starts): a cancel that comes first is applied when the token arrives.
final class TokenHolder: @unchecked Sendable {  // `lock` guards `stored`, `isSet`, `pending` and `cancelled`
    private let lock = NSLock()
    private var stored: ImageDownloadToken?
    private var isSet = false
    private var pending: (@Sendable (ImageDownloadToken?) -> Void)?
    private var cancelled = false

    var taskCancelled: Bool { lock.withLock { cancelled } }

    func set(_ token: ImageDownloadToken?) {
        let (cancelNow, run): (Bool, (@Sendable (ImageDownloadToken?) -> Void)?) = lock.withLock {
            stored = token
            isSet = true
            defer { pending = nil }
            return (cancelled, pending)
        }
        if cancelNow { token?.cancel() }
        run?(token)
    }

    /// Runs `body` with the token once `set` has been called (at once when it has): a completion can arrive
    /// before `downloadImage` has returned the token, e.g. for an HTTP cache hit, and the result's response
    /// and metrics come from the token.
    func withToken(_ body: @escaping @Sendable (ImageDownloadToken?) -> Void) {
        let ready: ImageDownloadToken?? = lock.withLock {
            if isSet { return .some(stored) }
            pending = body
            return .none
        }
        if case .some(let token) = ready { body(token) }
    }

    func cancel() {
        let token: ImageDownloadToken? = lock.withLock {
            cancelled = true
            return stored
        }
        token?.cancel()
    }
}

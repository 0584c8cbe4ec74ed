import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ImageDownloader {
    /// Reports the bytes of an async download: received so far, and the expected total (-1 while unknown).
    public typealias AsyncProgressHandler = @Sendable (_ received: Int, _ expected: Int) -> Void

    /// Downloads and decodes `url`. Cancelling the calling Task cancels this caller's token (other callers of
    /// the same URL continue) and throws `CancellationError`; download failures throw `ImageDownloaderError`
    /// (a transformer's own error as it threw it). The result's `image` is `nil` with `.avoidDecodeImage`.
    /// For the attempts and metrics of a failure, use `imageResult(for:options:context:progress:)`.
    public func image(
        for url: URL, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil
    ) async throws -> ImageDownloadResult {
        try await outcome(for: url, options: options, context: context, progress: nil).mapError(\.error).get()
    }

    /// Downloads and decodes `url`, calling `progress` as bytes arrive (on the callback queue: the context's,
    /// else the configuration's). Cancellation and errors as `image(for:options:context:)`.
    ///
    /// ```swift
    /// let result = try await downloader.image(for: url) { received, expected in
    ///     if expected > 0 { print("\(received * 100 / expected)%") }
    /// }
    /// ```
    public func image(
        for url: URL, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil,
        progress: @escaping AsyncProgressHandler
    ) async throws -> ImageDownloadResult {
        try await outcome(for: url, options: options, context: context, progress: progress).mapError(\.error).get()
    }

    /// Downloads and decodes `url` and returns the outcome instead of throwing: the result, or an
    /// `ImageDownloadFailure` with the error, the last response and the metrics (how many attempts were made,
    /// the last attempt's status and timings). A cancelled Task gives a failure whose error is
    /// `CancellationError` (`isCancellation`).
    public func imageResult(
        for url: URL, options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil,
        progress: AsyncProgressHandler? = nil
    ) async -> Result<ImageDownloadResult, ImageDownloadFailure> {
        await outcome(for: url, options: options, context: context, progress: progress)
    }

    /// The one async download: a token per call, its cancel wired to the Task's, and the token's response and
    /// metrics read once the answer arrives (a failure keeps the operation's metrics: the attempts it made).
    private func outcome(
        for url: URL, options: ImageDownloaderOptions, context: ImageDownloaderContext?,
        progress: AsyncProgressHandler?
    ) async -> Result<ImageDownloadResult, ImageDownloadFailure> {
        let holder = TokenHolder()
        var reporter: ImageDownloaderProgressHandler?
        if let progress { reporter = { received, expected, _ in progress(received, expected) } }
        typealias Outcome = Result<ImageDownloadResult, ImageDownloadFailure>
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let token = downloadImage(url, options: options, context: context, progress: reporter) {
                    image, data, error, finished in
                    guard finished else { return }
                    holder.withToken { token in
                        let response = token?.response as? HTTPURLResponse
                        guard var error else {
                            continuation.resume(returning: .success(ImageDownloadResult(
                                image: image, data: data ?? Data(), response: response, metrics: token?.metrics)))
                            return
                        }
                        if case ImageDownloaderError.cancelled = error, holder.taskCancelled { error = CancellationError() }
                        continuation.resume(returning: .failure(ImageDownloadFailure(
                            error: error, response: response, metrics: token?.metrics)))
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
    /// and metrics come from the token. The answer is then given: the holder lets the token go, which breaks
    /// the cycle token → operation → the completion closure → this holder (the operations of every async
    /// download stayed alive).
    func withToken(_ body: @escaping @Sendable (ImageDownloadToken?) -> Void) {
        let ready: ImageDownloadToken?? = lock.withLock {
            if isSet {
                defer { stored = nil }
                return .some(stored)
            }
            pending = { token in
                body(token)
                self.release()
            }
            return .none
        }
        if case .some(let token) = ready { body(token) }
    }

    private func release() {
        lock.withLock { stored = nil }
    }

    func cancel() {
        let token: ImageDownloadToken? = lock.withLock {
            cancelled = true
            return stored
        }
        token?.cancel()
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failed download with its story: the error, the last response, and the metrics of the last attempt
/// (how many attempts a retry policy made, how long they took, the status the server sent).
///
/// `ImageDownloader.imageResult(for:options:context:progress:)` returns it as the failure of its `Result`.
/// `image(for:)` keeps throwing the bare error (so `catch let error as ImageDownloaderError` works as it did);
/// use `imageResult(for:)` where the history of a failure matters, e.g. to log how many attempts were made.
public struct ImageDownloadFailure: Error, Sendable, CustomStringConvertible {
    /// What ended the download: an `ImageDownloaderError`, the error a transformer threw, or
    /// `CancellationError` when the calling Task was cancelled.
    public var error: any Error
    /// The last HTTP response of the download (an error status, or the response whose body failed to decode);
    /// `nil` when none arrived.
    public var response: HTTPURLResponse?
    /// The download's measurements as it ended: `attemptCount`, the last attempt's status, sizes, timings and
    /// connection figures. `nil` when the download was refused before it was queued (an invalid URL, a request
    /// modifier returning nil, an invalidated downloader).
    public var metrics: ImageDownloadMetrics?

    public init(error: any Error, response: HTTPURLResponse? = nil, metrics: ImageDownloadMetrics? = nil) {
        self.error = error
        self.response = response
        self.metrics = metrics
    }

    /// The error as the downloader reports it, or `nil` for a transformer's own error and `CancellationError`.
    public var downloaderError: ImageDownloaderError? { error as? ImageDownloaderError }

    /// Whether the calling Task was cancelled (`CancellationError`) or this caller was cancelled
    /// (`ImageDownloaderError.cancelled`).
    public var isCancellation: Bool {
        if error is CancellationError { return true }
        if case .cancelled? = downloaderError { return true }
        return false
    }

    /// Requests the download sent, retries included (`metrics.attemptCount`, which also counts a request a
    /// transport re-sent on its own); 0 when it ended before its first request (refused, cancelled while
    /// queued) or was answered by the HTTP cache without a request (a stored 404).
    public var attemptCount: Int { metrics?.attemptCount ?? 0 }

    /// The error's message, with the attempt count when the download was tried more than once:
    /// "unacceptable HTTP status 503 (Service Unavailable) (after 3 attempts)".
    public var description: String {
        let attempts = attemptCount
        return attempts > 1 ? "\(error) (after \(attempts) attempts)" : "\(error)"
    }
}

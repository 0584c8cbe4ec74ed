import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One caller's handle on a download (SDWebImage's `SDWebImageDownloadToken`, AFNetworking's receipt).
///
/// Cancelling it answers this caller alone with `.cancelled` (once); other callers of the same URL keep
/// their download. The last token cancelled stops the network transfer.
public final class ImageDownloadToken: @unchecked Sendable {  // immutable after init; `cancelled` is a lock-guarded flag
    /// The URL this token downloads.
    public let url: URL?
    /// The request as sent (after the request modifier).
    public let request: URLRequest?
    /// The operation the caller joined, as the downloader talks to it.
    let handle: any DownloadOperationHandle
    let callerToken: AnyObject
    /// The downloader's coalescing key (URL, cache identifier and the options that change the transfer).
    let coalescingKey: CoalescingKey
    private weak var downloader: ImageDownloader?
    private let cancelled = OnceFlag()

    init(url: URL?, request: URLRequest?, handle: any DownloadOperationHandle, callerToken: AnyObject,
         coalescingKey: CoalescingKey, downloader: ImageDownloader) {
        self.coalescingKey = coalescingKey
        self.url = url
        self.request = request
        self.handle = handle
        self.callerToken = callerToken
        self.downloader = downloader
    }

    /// The operation the caller joined.
    var operation: any ImageDownloaderOperationProtocol { handle.operation }

    /// The response, once it has arrived.
    public var response: URLResponse? { operation.response }

    /// The measured timings so far.
    public var metrics: ImageDownloadMetrics? { operation.metrics }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { cancelled.isClaimed }

    /// Cancels this caller: its completion runs once with `ImageDownloaderError.cancelled`, unless it was
    /// already answered. Calling it again does nothing.
    public func cancel() {
        guard cancelled.claim() else { return }
        if let downloader {
            downloader.cancel(self)
        } else {
            _ = handle.cancelCaller(callerToken)
        }
    }
}

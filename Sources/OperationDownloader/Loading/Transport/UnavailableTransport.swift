import Foundation

/// A transfer that cannot run: `resume()` reports `error` as its completion, once (a transport that is not
/// available here, an invalidated session).
final class FailedTransfer: TransportTransfer, @unchecked Sendable {  // `lock` guards `state`
    private enum State { case created, ended }
    private weak var client: (any TransferClient)?
    private let error: any Error
    private let lock = NSLock()
    private var state = State.created

    init(client: any TransferClient, error: any Error) {
        self.client = client
        self.error = error
    }

    func resume() {
        let live: Bool = lock.withLock {
            defer { state = .ended }
            return state == .created
        }
        if live { client?.transfer(self, didCompleteWith: error, metrics: TransferMetrics()) }
    }

    func cancel() { lock.withLock { state = .ended } }
    func suspendReading() {}
    func resumeReading() {}
    func setPriority(_ priority: Float) {}
}

/// The transport of a downloader configured with one that cannot run here (`.curl` without libcurl): every
/// download fails with `.unsupportedOnPlatform(reason)`, before anything is queued.
final class UnavailableTransport: DownloadTransport {
    let reason: String

    init(reason: String) {
        self.reason = reason
    }

    func makeTransfer(_ request: TransferRequest, client: any TransferClient) -> any TransportTransfer {
        FailedTransfer(client: client, error: ImageDownloaderError.unsupportedOnPlatform(reason))
    }

    func invalidate(cancellingTransfers: Bool) {}

    func unsupportedReason(for url: URL) -> String? { reason }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// [HTTP cache] The turns the HTTP cache (`HTTPCacheTransaction`) can give a download: wait for another
/// process's fetch of the same URL (a shared cache's single-flight), start the download again (a 304 that
/// matches no stored response) or deliver the stored response instead of an error (stale-if-error, or a
/// disconnected origin). Serving without a request is in ImageDownloaderOperation+Finish.swift
/// (`serveFromHTTPCache`), the 304 refresh and the stale answer to a 5xx in `transfer(_:didReceive:)`.
extension ImageDownloaderOperation {
    /// Another download of the fleet fetches this URL into the shared cache: the operation stays `.starting`
    /// (a cancel answers the callers at once and ends the wait) until the fetch ends, then plans again
    /// (`sendOrServe`): the stored entry is served, or the download sends its own request.
    func waitForSharedFetch(_ wait: HTTPCacheFlightWait) {
        modifyState { $0.waitingForSharedFetch() }
        observation?.sharedFetchWaitBegan()
        httpTransaction?.whenSharedFetchEnds(wait) { [self] in
            observation?.sharedFetchWaitEnded()
            if modifyState({ $0.cancelRequested }) {
                finish(error: ImageDownloaderError.cancelled, cancelTransfer: false)
            } else {
                sendOrServe()
            }
        }
        // A cancel that came while the wait was being set up found nothing to end: end it now.
        if modifyState({ $0.cancelRequested }) { httpTransaction?.cancelSharedFetchWait() }
    }

    /// A 304 whose validator matches no stored response (RFC 9111 §4.3.4): the download starts again with
    /// `request` (unconditional) on a new transfer of the same transport. The state goes back to `.starting`
    /// (a cancel meanwhile is handled as during `start()`); the old transfer is cancelled and, no longer the
    /// running attempt, its late events are ignored. Its request counts in `metrics.attemptCount`.
    func refetch(_ request: URLRequest, replacing old: any TransportTransfer) {
        // The old transfer's clocks stop; back to `starting`.
        guard modifyStateAndRunActions({ $0.refetchRequested(replacing: old) }) else { return }
        old.cancel()
        startAttempt(request, first: false)
    }

    /// When the attempt of `transfer` failed with a transport error (timeouts included) and the HTTP cache may
    /// answer with its stale stored response instead (`HTTPCacheTransaction.failed`): delivers it as the
    /// download's result (metrics `servedStale`) and returns true. False leaves the failure to the caller.
    func serveStale(insteadOf error: ImageDownloaderError, from transfer: any TransportTransfer, cancelTransfer: Bool) -> Bool {
        guard let httpTransaction, httpTransaction.mayStore, case .network(let urlError) = error,
              modifyState({ $0.mayServeStale(transfer) }),
              let stale = httpTransaction.failed(urlError) else { return false }
        if stale.statusCode == 304 {  // the caller's own validators name the stored response: as the origin's 304
            finish(error: ImageDownloaderError.notModified, cancelTransfer: cancelTransfer)
            return true
        }
        // The attempt's clocks stop.
        guard let taken = modifyStateAndRunActions({ $0.servingStale(stale, insteadOf: transfer) }) else { return false }
        if !taken.hadResponse { callers.post(.receiveResponse, object: self) }
        // Completed first: once the attempt is no longer running, the cancelled transfer's last event is ignored.
        complete(taken.attempt)
        if cancelTransfer { transfer.cancel() }
        return true
    }
}

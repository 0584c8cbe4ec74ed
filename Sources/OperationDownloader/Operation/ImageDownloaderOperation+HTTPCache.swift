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
        state.withLock { $0.metrics.waitedForSharedFetch = true }
        httpTransaction.whenSharedFetchEnds(wait) { [self] in
            if state.withLock({ $0.cancelRequested }) {
                finish(error: ImageDownloaderError.cancelled, cancelTransfer: false)
            } else {
                sendOrServe()
            }
        }
        // A cancel that came while the wait was being set up found nothing to end: end it now.
        if state.withLock({ $0.cancelRequested }) { httpTransaction.cancelSharedFetchWait() }
    }

    /// A 304 whose validator matches no stored response (RFC 9111 §4.3.4): the download starts again with
    /// `request` (unconditional) on a new transfer of the same transport. The state goes back to `.starting`
    /// (a cancel meanwhile is handled as during `start()`); the old transfer is cancelled and, no longer the
    /// running attempt, its late events are ignored. Its request counts in `metrics.attemptCount`.
    func refetch(_ request: URLRequest, replacing old: any TransportTransfer) {
        let (replaced, timeouts): (Bool, (TransferTimeouts, TransferTimeouts.Running)?) = state.withLock { s in
            guard s.isCurrent(old), !s.cancelRequested else { return (false, nil) }
            let timeouts = s.stopTimeouts()
            s.requestsSent += 1
            s.phase = .starting
            return (true, timeouts)
        }
        guard replaced else { return }
        if let (clocks, running) = timeouts { clocks.stop(running) }
        old.cancel()
        startAttempt(request, first: false)
    }

    /// When the attempt of `transfer` failed with a transport error (timeouts included) and the HTTP cache may
    /// answer with its stale stored response instead (`HTTPCacheTransaction.failed`): delivers it as the
    /// download's result (metrics `servedStale`) and returns true. False leaves the failure to the caller.
    func serveStale(insteadOf error: ImageDownloaderError, from transfer: any TransportTransfer, cancelTransfer: Bool) -> Bool {
        guard httpTransaction.mayStore, case .network(let urlError) = error,
              state.withLock({ $0.isCurrent(transfer) && !$0.cancelRequested }),
              let stale = httpTransaction.failed(urlError) else { return false }
        if stale.statusCode == 304 {  // the caller's own validators name the stored response: as the origin's 304
            finish(error: ImageDownloaderError.notModified, cancelTransfer: cancelTransfer)
            return true
        }
        typealias Taken = (attempt: Attempt, hadResponse: Bool, timeouts: (TransferTimeouts, TransferTimeouts.Running)?)
        let taken: Taken? = state.withLock { s in
            guard let attempt = s.isCurrent(transfer) && !s.cancelRequested ? s.attempt : nil else { return nil }
            attempt.revalidated = stale
            s.response = TransportResponse(stale.response)
            s.metrics.source = stale.source
            s.metrics.servedStale = true
            s.metrics.statusCode = stale.statusCode
            let hadResponse = s.metrics.responseAt != nil
            if !hadResponse { s.metrics.responseAt = Date() }
            return (attempt, hadResponse, s.stopTimeouts())
        }
        guard let taken else { return false }
        if let (clocks, running) = taken.timeouts { clocks.stop(running) }
        if !taken.hadResponse { callers.post([.imageDownloadReceiveResponse], object: self) }
        // Completed first: once the attempt is no longer running, the cancelled transfer's last event is ignored.
        complete(taken.attempt)
        if cancelTransfer { transfer.cancel() }
        return true
    }
}

import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The end of a download: the complete body goes to the final step (FinalDecodeStep.swift), then `finish`
/// answers every caller once and releases everything before `isFinished` flips.
extension ImageDownloaderOperation {
    /// An attempt's transfer completed with an acceptable response: the final step, on the coder queue (at most
    /// one final decode per core process-wide: `DecodeLimiter`), or right here when there is nothing to decode,
    /// decrypt or store (no thread hop; the stop and finish notifications leave with the answers).
    func complete(_ attempt: Attempt) {
        let nothingToDo = context.decryptor == nil && !httpTransaction.mayStore
        typealias Taken = (data: Data, progressive: ProgressiveDecoding?, report: Bool, toStore: TransportResponse?, inline: Bool)
        let taken: Taken? = state.withLock { s in
            guard s.isCurrent(attempt.transfer) else { return nil }
            // Decided once, here: `finish` posts the stop notification on the inline path.
            let inline = nothingToDo && !s.anyCallerDecodes && s.progressive == nil
            if !inline { s.stopPosted = true }
            var data = attempt.buffer
            if let revalidated = attempt.revalidated {
                // A 304 has no body: the download's bytes are the stored ones.
                data = revalidated.data
                s.metrics.receivedBytes = data.count
            }
            let report = s.hasProgressHandlers && (attempt.lastReportedSize != data.count || attempt.expectedSize != data.count)
            s.phase = .completing
            // The incremental decoders saw no bytes of a 304: the stored body is decoded in one shot.
            let progressive = attempt.revalidated == nil ? s.progressive : nil
            return (data, progressive, report, attempt.revalidated == nil ? attempt.serverResponse : nil, inline)
        }
        guard let taken else { return }
        if taken.report { callers.reportProgress(taken.data.count, taken.data.count) }
        if taken.inline {
            finish(finalStep.run(taken.data, response: response, progressive: nil, callers: nil), cancelTransfer: false,
                   alsoPosting: [.imageDownloadFinish])
            return
        }
        callers.post([.imageDownloadStop, .imageDownloadFinish], object: self)
        runFinalStep(taken.data, progressive: taken.progressive, storing: taken.toStore)
    }

    /// A fresh (or policy-allowed) HTTP cache entry: no transfer; the same callbacks, notifications and
    /// decoding as a download, with metrics saying the cache was the source.
    func serveFromHTTPCache(_ cached: CachedHTTPResponse) {
        // [HTTP cache] a stored 404/410 (or the 504 of only-if-cached): the same error, without a request.
        let (cancelled, rejected): (Bool, Bool) = state.withLock {
            $0.metrics.recordServedFromCache(status: cached.statusCode, bytes: cached.data.count)
            $0.metrics.source = cached.source  // [HTTP cache]
            $0.metrics.servedStale = cached.isStale  // [HTTP cache]
            $0.response = TransportResponse(cached.response)
            $0.phase = .completing
            let rejected = cached.statusCode == 304
                || !ResponseValidation.isAcceptable(status: cached.statusCode, codes: $0.acceptableStatusCodes)
            $0.stopPosted = !rejected  // [HTTP cache] a rejected one: `finish` posts the stop
            return ($0.cancelRequested, rejected)
        }
        if cancelled {
            finish(error: ImageDownloaderError.cancelled, cancelTransfer: false)
            return
        }
        let reports = hasProgressHandlers
        if reports { callers.reportProgress(0, -1) }
        callers.post([.imageDownloadStart], object: self)
        if rejected {  // [HTTP cache] a 304: the caller's own validators name the stored response, as from the network
            finish(error: cached.statusCode == 304 ? ImageDownloaderError.notModified
                : ImageDownloaderError.invalidDownloadStatusCode(cached.statusCode), cancelTransfer: false)
            return
        }
        if reports { callers.reportProgress(0, cached.data.count) }
        callers.post([.imageDownloadReceiveResponse], object: self)
        if reports { callers.reportProgress(cached.data.count, cached.data.count) }
        callers.post([.imageDownloadStop, .imageDownloadFinish], object: self)
        runFinalStep(cached.data, progressive: nil, storing: nil, limited: false)
    }

    /// The body stored in the HTTP cache (as received, before any decryptor, whether or not it decodes), then
    /// the final step, off the transport's thread.
    private func runFinalStep(_ data: Data, progressive: ProgressiveDecoding?, storing toStore: TransportResponse?, limited: Bool = true) {
        let transaction = httpTransaction
        let step = finalStep
        let work: @Sendable () -> Void = { [self] in
            if let toStore { transaction.completed(toStore, data: data) }
            let decodes: Bool? = state.withLock {
                guard case .completing = $0.phase else { return nil }
                return $0.anyCallerDecodes
            }
            guard let decodes else { return }  // cancelled meanwhile
            // Decoded while callers can still join (the store is open); a caller joining later gets its variant
            // decoded when it is answered.
            let ending = step.run(data, response: response, progressive: progressive, callers: decodes ? callers.snapshot : nil)
            finish(ending, cancelTransfer: false)
        }
        if limited && state.withLock({ $0.anyCallerDecodes }) {
            // Full-size bitmaps are what peak memory is made of: at most one final decode per core at a time.
            DecodeLimiter.shared.async(on: coderQueue, work)
        } else {
            coderQueue.async(execute: work)
        }
    }

    private var finalStep: FinalDecodeStep {
        FinalDecodeStep(
            url: originalRequest.url, settings: settings, decryptor: context.decryptor,
            maximumPixelCount: context.maximumPixelCount, transaction: httpTransaction, decodeCancellation: decodeCancellation)
    }

    func finish(error: any Error, cancelTransfer: Bool, alsoPosting: [Notification.Name] = []) {
        finish(.failure(error), cancelTransfer: cancelTransfer, alsoPosting: alsoPosting)
    }

    /// Ends the download: answers every remaining caller once (the memory cache written first), cancels the
    /// transfer if asked, releases decoders, transport and background task, then flips `isFinished`. Only the
    /// first call has an effect. `alsoPosting` are notifications that go out right after `imageDownloadStop`
    /// (when this call posts it) and before the answers. `ifRunning`: only while that transfer's attempt runs.
    func finish(
        _ ending: DownloadEnding, cancelTransfer: Bool, alsoPosting: [Notification.Name] = [],
        ifRunning transfer: (any TransportTransfer)? = nil
    ) {
        typealias Taken = (attempt: Attempt?, postStop: Bool, timeouts: (TransferTimeouts, TransferTimeouts.Running)?)
        var waitToEnd: RetryWait?
        let taken: Taken? = state.withLock { s in
            switch s.phase {
            case .starting, .transferring, .waitingToRetry, .completing: break
            case .pending, .finished: return nil
            }
            if let transfer, !s.isCurrent(transfer) { return nil }
            if case .waitingToRetry(let wait) = s.phase { waitToEnd = wait }
            let attempt = s.attempt
            let timeouts = s.stopTimeouts()
            s.phase = .finished
            s.metrics.finishedAt = Date()
            defer { s.stopPosted = true }
            return (attempt, !s.stopPosted, timeouts)
        }
        guard let taken else { return }
        // A backoff wait ends now (its completion sees the finished phase and does nothing).
        waitToEnd?.cancel()
        if let (clocks, running) = taken.timeouts { clocks.stop(running) }
        if cancelTransfer { taken.attempt?.transfer.cancel() }
        callers.answerAll(ending, after: (taken.postStop ? [.imageDownloadStop] : []) + alsoPosting, object: self)
        releaseResources()
        setFinished()
    }

    /// Drops everything big before `isFinished` flips: finished operations can linger in OperationQueue.
    func releaseResources() {
        let (transport, owned, background) = state.withLock { s in
            defer {
                s.transport = nil
                s.progressive = nil
                s.backgroundTask = nil
            }
            return (s.transport, s.ownsTransport, s.backgroundTask)
        }
        httpTransaction.release()
        // Its transfer is cancelled or complete: the owned session ends once it is done.
        if owned { transport?.invalidate(cancellingTransfers: false) }
        if let background { background.provider.endBackgroundTask(background.id) }
    }
}

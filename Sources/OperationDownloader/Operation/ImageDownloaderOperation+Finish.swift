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
        let nothingToDo = transferOptions.decryptor == nil && httpTransaction?.mayStore != true
        guard let taken = modifyState({ $0.attemptCompleted(attempt, nothingToDo: nothingToDo) }) else { return }
        if taken.reportsProgress { callers.reportProgress(taken.data.count, taken.data.count) }
        if taken.inline {
            finish(finalStep.run(taken.data, response: response, incremental: nil, callers: nil), cancelTransfer: false,
                   alsoPosting: [.finish])
            return
        }
        callers.post([.stop, .finish], object: self)
        runFinalStep(taken.data, incremental: taken.incremental, storing: taken.toStore)
    }

    /// A fresh (or policy-allowed) HTTP cache entry: no transfer; the same callbacks, notifications and
    /// decoding as a download, with metrics saying the cache was the source.
    func serveFromHTTPCache(_ cached: CachedHTTPResponse) {
        // [HTTP cache] a stored 404/410 (or the 504 of only-if-cached): the same error, without a request.
        let (cancelled, rejected) = modifyStateAndRunActions { $0.servedFromCache(cached) }
        if cancelled {
            finish(error: ImageDownloaderError.cancelled, cancelTransfer: false)
            return
        }
        let reports = hasProgressHandlers
        if reports { callers.reportProgress(0, -1) }
        callers.post(.start, object: self)
        if rejected {  // [HTTP cache] a 304: the caller's own validators name the stored response, as from the network
            finish(error: cached.statusCode == 304 ? ImageDownloaderError.notModified
                : ImageDownloaderError.invalidDownloadStatusCode(cached.statusCode), cancelTransfer: false)
            return
        }
        if reports { callers.reportProgress(0, cached.data.count) }
        callers.post(.receiveResponse, object: self)
        if reports { callers.reportProgress(cached.data.count, cached.data.count) }
        callers.post([.stop, .finish], object: self)
        runFinalStep(cached.data, incremental: nil, storing: nil, limited: false)
    }

    /// The body stored in the HTTP cache (as received, before any decryptor, whether or not it decodes), then
    /// the final step, off the transport's thread.
    private func runFinalStep(_ data: Data, incremental: IncrementalDecoding?, storing toStore: TransportResponse?, limited: Bool = true) {
        let transaction = httpTransaction
        let step = finalStep
        let work: @Sendable () -> Void = { [self] in
            if let toStore { transaction?.completed(toStore, data: data) }
            guard let due = modifyState({ $0.finalDecodeDue() }) else { return }  // cancelled meanwhile
            var step = step
            step.decodeCancellation = due.cancellation
            // Decoded while callers can still join (the store is open); a caller joining later gets its variant
            // decoded when it is answered.
            let ending = step.run(data, response: response, incremental: incremental, callers: due.decodes ? callers.snapshot : nil)
            finish(ending, cancelTransfer: false)
        }
        if limited && modifyState({ $0.anyCallerDecodes }) {
            // Full-size bitmaps are what peak memory is made of: at most one final decode per core at a time.
            DecodeLimiter.shared.async(on: coderQueue, work)
        } else {
            coderQueue.async(execute: work)
        }
    }

    private var finalStep: FinalDecodeStep {
        FinalDecodeStep(
            url: requestURL, transfer: transferOptions, transaction: httpTransaction, observation: observation)
    }

    func finish(error: any Error, cancelTransfer: Bool, alsoPosting: DownloadNotifications = []) {
        finish(.failure(error), cancelTransfer: cancelTransfer, alsoPosting: alsoPosting)
    }

    /// Ends the download: answers every remaining caller once (the memory cache written first), cancels the
    /// transfer if asked, releases decoders, transport and background task, then flips `isFinished`. Only the
    /// first call has an effect (`DownloadStateMachine.finish`). `alsoPosting` are notifications that go out right
    /// after `imageDownloadStop` (when this call posts it) and before the answers. `ifRunning`: only while that
    /// transfer's attempt runs.
    func finish(
        _ ending: DownloadEnding, cancelTransfer: Bool, alsoPosting: DownloadNotifications = [],
        ifRunning transfer: (any TransportTransfer)? = nil
    ) {
        modifyStateAndRunActions {
            $0.finish(ending, cancelTransfer: cancelTransfer, alsoPosting: alsoPosting, ifRunning: transfer)
        }
    }
}

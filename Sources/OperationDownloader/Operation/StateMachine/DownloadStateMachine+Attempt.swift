import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The attempts: one starts, its clocks run, it ends (completed, failed and retried, refetched, answered from
/// the HTTP cache), and the download moves on to its final step.
extension DownloadStateMachine {
    // MARK: - An attempt starts

    /// The request an attempt sends: `request` itself, or (after a cut body that can be continued) `request`
    /// asking for the rest, with the `ResumePoint` its attempt continues. A resume point the request cannot
    /// carry (the HTTP cache made it conditional) is dropped, and its incremental decoders with it.
    mutating func requestForAttempt(_ request: URLRequest) -> (request: URLRequest, resuming: ResumePoint?) {
        guard let point = resumePoint else { return (request, nil) }
        setResumePoint(nil)
        guard let ranged = point.rangedRequest(request) else {
            dropIncremental()
            return (request, nil)
        }
        return (ranged, point)
    }

    /// starting → transferring: one more attempt, one more request (`requestsSent`). Returns whether progress is
    /// reported (nil: the attempt does not go on; the action says why: a cancel that came while starting ends
    /// the download, a finished download just cancels the new transfer).
    mutating func beginAttempt(_ attempt: Attempt) -> (Action, Bool?) {
        switch phase {
        case .starting: break
        case .finished: return (.cancelTransfer(attempt.transfer), nil)
        case .pending, .transferring, .waitingToRetry, .completing:
            // In release builds: the download ends (nothing to end before start: the new transfer is cancelled).
            let end = impossible("beginAttempt")
            if case .none = end { return (.cancelTransfer(attempt.transfer), nil) }
            return (end, nil)
        }
        recordMetrics {
            if $0.startedAt == nil { $0.startedAt = Date() }  // durations span the retries
            // Status, sizes and connection figures are the last request's, not an earlier attempt's.
            $0.recordRequestStarted(keptBytes: attempt.buffer.count)
        }
        countRequests(1)
        // The attempt posts its own start (unless a cancel ends it before it does).
        if !cancelRequested { notePosted(stop: false) }
        moveToTransferring(attempt)
        if cancelRequested { return (finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: true), nil) }
        return (.none, hasProgressHandlers)
    }

    /// The attempt's clocks were started: kept while it runs, stopped at once when it ended meanwhile.
    mutating func clocksStarted(_ clocks: Clocks, for transfer: any TransportTransfer) -> Action {
        guard let attempt = attempt(of: transfer), !attempt.timeoutsStopped else { return .stopClocks(clocks) }
        attempt.runningTimeouts = clocks.running
        return .none
    }

    /// When `transfer` last reported an event (read by the deadline monitor when the idle deadline is due).
    func lastActivity(of transfer: any TransportTransfer) -> UInt64 {
        attempt(of: transfer)?.lastActivity ?? 0
    }

    /// An event of `transfer` arrived: its attempt, activity noted, when it is the running one.
    mutating func noteActivity(of transfer: any TransportTransfer, now: UInt64) -> Attempt? {
        guard let attempt = attempt(of: transfer) else { return nil }
        attempt.lastActivity = now
        return attempt
    }

    // MARK: - An attempt ends

    struct Ended {
        let attempt: Attempt
        let cancelRequested: Bool
        /// What a transport's own size limit reports at least.
        let bodySize: Int
        let redirects: Int
        /// What `ConnectionLoss` needs to tell a body cut short.
        let body: ConnectionLoss.Body
    }

    /// The transfer completed (with or without an error): its requests counted (a transport re-sending on a
    /// fresh connection counts too: the server saw it), its clocks stopped (decoding never counts against a
    /// timeout). Nil: a stale transfer.
    mutating func transferCompleted(
        _ transfer: any TransportTransfer, metrics: TransferMetrics, minimumBodySize: Int
    ) -> (Action, Ended?) {
        guard let attempt = attempt(of: transfer) else { return (.none, nil) }
        countRequests(max(1, metrics.requestsSent) - 1)  // the first was counted when the attempt began
        recordMetrics { $0.record(metrics) }
        let ended = Ended(
            attempt: attempt, cancelRequested: cancelRequested,
            bodySize: max(minimumBodySize, attempt.expectedSize, attempt.buffer.count),
            redirects: redirectCount,
            body: ConnectionLoss.Body(
                responded: attempt.responded, received: attempt.buffer.count, expected: attempt.expectedSize,
                response: attempt.serverResponse))
        return (stopClocks().map(Action.stopClocks) ?? .none, ended)
    }

    /// What the retry policy judges about the failed attempt of `transfer`: the attempt number (requests sent so
    /// far) and the response (with its Retry-After). Nil: no retry (cancelled, or stale).
    func failedAttempt(_ transfer: any TransportTransfer) -> (attempt: Int, response: TransportResponse?)? {
        guard !cancelRequested, let attempt = attempt(of: transfer) else { return nil }
        return (requestsSent, attempt.serverResponse ?? response)
    }

    /// transferring → waitingToRetry: this attempt's stop goes out now (a cancel during the wait posts no second
    /// one). [resume] When the cut body can be continued (`ResumePoint`), its bytes and its incremental decoders
    /// wait for the next attempt; otherwise that attempt starts from byte 0 with fresh decoders. A cancel or
    /// another end that came first: the download ends with `error` instead (a no-op when it already ended).
    mutating func retryScheduled(
        _ transfer: any TransportTransfer, error: ImageDownloaderError, wait: RetryWait, delay: TimeInterval,
        cancelTransfer: Bool
    ) -> Action {
        guard !cancelRequested, isCurrent(transfer) else {
            return finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
        }
        let kept: ResumePoint?
        if let attempt = attempt(of: transfer) {
            // A ranged request that never got its 206 (cut before it, or an error status) keeps its point.
            kept = attempt.resumedFrom == nil ? attempt.resuming ?? ResumePoint(cutShort: attempt) : ResumePoint(cutShort: attempt)
        } else {
            kept = nil
        }
        let clocks = stopClocks()
        moveToWaiting(wait)
        notePosted(stop: true)
        setResumePoint(kept)
        if kept == nil { dropIncremental() }
        return .waitToRetry(Retry(
            wait: wait, delay: delay, clocks: clocks, transferToCancel: cancelTransfer ? transfer : nil))
    }

    /// The retry timer of `wait` fired: waitingToRetry → starting (a cancel from here answers the callers at once
    /// and the next attempt finishes, as during `start()`). False: the download ended meanwhile.
    mutating func retryTimerFired(_ wait: RetryWait) -> Bool {
        guard let current = retryWait, current === wait else { return false }
        moveToStarting()
        return true
    }

    /// [HTTP cache] A 304 that matches no stored response: transferring → starting, for a new transfer (its
    /// request counts when it begins; the old one was counted when it began). False: stale or cancelled.
    mutating func refetchRequested(replacing old: any TransportTransfer) -> (Action, Bool) {
        guard isCurrent(old), !cancelRequested else { return (.none, false) }
        let clocks = stopClocks()
        moveToStarting()
        return (clocks.map(Action.stopClocks) ?? .none, true)
    }

    /// [HTTP cache] Whether the failure of `transfer` may still be answered with a stale stored response.
    func mayServeStale(_ transfer: any TransportTransfer) -> Bool {
        isCurrent(transfer) && !cancelRequested
    }

    /// [HTTP cache] The attempt of `transfer` is answered with `stale` (stale-if-error): its clocks stop; returns
    /// the attempt to complete and whether a response had been announced already.
    mutating func servingStale(
        _ stale: CachedHTTPResponse, insteadOf transfer: any TransportTransfer
    ) -> (Action, (attempt: Attempt, hadResponse: Bool)?) {
        guard !cancelRequested, let attempt = attempt(of: transfer) else { return (.none, nil) }
        attempt.revalidated = stale
        setResponse(TransportResponse(stale.response))
        var hadResponse = false
        recordMetrics {
            $0.source = stale.source
            $0.servedStale = true
            $0.statusCode = stale.statusCode
            hadResponse = $0.responseAt != nil
            if !hadResponse { $0.responseAt = Date() }
        }
        return (stopClocks().map(Action.stopClocks) ?? .none, (attempt, hadResponse))
    }

    // MARK: - The final step

    struct Completion {
        let data: Data
        let incremental: IncrementalDecoding?
        let reportsProgress: Bool
        /// The server's response to store in the HTTP cache (none for a body that came from it).
        let toStore: TransportResponse?
        /// Nothing to decode, decrypt or store: finished right away (its stop goes out with the answers).
        let inline: Bool
    }

    /// transferring → completing: the attempt's body (or the stored one of a 304) goes to the final step.
    /// `nothingToDo`: no decryptor and no HTTP cache to store in. Nil: the attempt is no longer the running one.
    mutating func attemptCompleted(_ attempt: Attempt, nothingToDo: Bool) -> Completion? {
        guard isCurrent(attempt.transfer) else { return nil }
        let inline = nothingToDo && !anyCallerDecodes && incremental == nil
        // Decided once, here: `finish` posts the stop notification on the inline path.
        if !inline { notePosted(stop: true) }
        var data = attempt.buffer.data
        if let revalidated = attempt.revalidated {
            data = revalidated.data  // a 304 has no body: the download's bytes are the stored ones
            recordMetrics { $0.receivedBytes = data.count }
        }
        let report = hasProgressHandlers && (attempt.lastReportedSize != data.count || attempt.expectedSize != data.count)
        moveToCompleting()
        // The incremental decoders saw no bytes of a 304: the stored body is decoded in one shot.
        let fromNetwork = attempt.revalidated == nil
        return Completion(
            data: data, incremental: fromNetwork ? incremental : nil, reportsProgress: report,
            toStore: fromNetwork ? attempt.serverResponse : nil, inline: inline)
    }

    /// [HTTP cache] starting → completing with a stored response, no request. Returns whether a cancel came
    /// first (or the download ended), and whether the stored status is rejected (a 304 or an unacceptable
    /// status: then `finish` posts the stop).
    mutating func servedFromCache(_ cached: CachedHTTPResponse) -> (Action, (cancelled: Bool, rejected: Bool)) {
        switch phase {
        case .starting: break
        case .finished: return (.none, (true, false))  // ended meanwhile: the operation's `finish` is a no-op
        case .pending, .transferring, .waitingToRetry, .completing:
            return (impossible("servedFromCache"), (true, false))
        }
        recordMetrics {
            $0.recordServedFromCache(status: cached.statusCode, bytes: cached.data.count)
            $0.source = cached.source
            $0.servedStale = cached.isStale
        }
        setResponse(TransportResponse(cached.response))
        moveToCompleting()
        let rejected = cached.statusCode == 304
            || !ResponseValidation.isAcceptable(status: cached.statusCode, codes: acceptableStatusCodes)
        notePosted(stop: !rejected)
        return (.none, (cancelRequested, rejected))
    }

    /// The final decode may run: whether any caller wants an image, and the decode's cancellation token (made
    /// only for a decode: most downloads never need one, and it is a lock). nil when the download ended or is
    /// being cancelled meanwhile (the cancel finishes it).
    mutating func finalDecodeDue() -> (decodes: Bool, cancellation: ImageDecodingCancellation?)? {
        guard case .completing = phase, !cancelRequested else { return nil }
        guard anyCallerDecodes else { return (false, nil) }
        let cancellation = ImageDecodingCancellation()
        decodeCancellation = cancellation
        return (true, cancellation)
    }
}

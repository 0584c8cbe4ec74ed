import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries (Docs/Options.md): a failed attempt asks `RetryPlanner` whether to try again; if so the operation waits
/// (`OperationState.Phase.waitingToRetry`), then starts a fresh transfer the way `start()` does (the HTTP cache
/// and cookies consulted again).
///
/// Rules kept here:
/// - the policy is the operation's (its first caller's context, else the configuration), for every coalesced
///   caller; callers joining during the wait share the next attempt; each caller is answered exactly once, by
///   `finish`, after the last attempt;
/// - an attempt is retried only while nothing of it reached a caller beyond the response (`Attempt.
///   deliveredBeyondResponse`);
/// - every attempt posts its own `imageDownloadStart` / `imageDownloadStop` pair (a network-activity counter
///   sees no activity during the wait); `imageDownloadFinish` goes out once, with a successful answer;
/// - the idle timeout and `maximumDownloadDuration` are per attempt (each transfer has its own clocks);
/// - a cancel during the wait ends it at once (`finish` cancels the `RetryWait`) and answers `.cancelled`;
/// - nothing of a failed attempt is stored in the HTTP cache (only `complete` stores, after a success).
extension ImageDownloaderOperation {
    /// `transfer`'s attempt failed with `error`: retry after a backoff wait, or end the operation with `error`.
    func retryOrFinish(_ transfer: any TransportTransfer, _ error: ImageDownloaderError, cancelTransfer: Bool) {
        guard let policy = settings.retryPolicy else {
            finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
            return
        }
        let failed: (attempt: Int, delivered: Bool, response: TransportResponse?)? = state.withLock { s in
            guard !s.cancelRequested, let attempt = s.isCurrent(transfer) ? s.attempt : nil else { return nil }
            // Incremental decoders run only for callers that asked for partial images.
            let delivered = attempt.deliveredBeyondResponse(decodesProgressively: s.progressive != nil)
            return (s.countAttempts(), delivered, attempt.serverResponse ?? s.response)
        }
        guard let failed else {
            finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
            return
        }
        let decision = RetryPlanner(policy: policy).decide(
            after: error, response: failed.response?.urlResponse, deliveredBeyondResponse: failed.delivered, attempt: failed.attempt)
        guard case .retry(let delay) = decision else {
            finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
            return
        }
        let wait = RetryWait(clock: DeadlineRetryClock(monitor: deadlineMonitor))
        let clocks: (TransferTimeouts, TransferTimeouts.Running)?? = state.withLock { s in
            // A cancel or another ending came first: `finish` below is then a no-op or answers the cancel.
            guard !s.cancelRequested, s.isCurrent(transfer) else { return nil }
            let clocks = s.stopTimeouts()
            s.phase = .waitingToRetry(wait)
            // This attempt's stop goes out now; a cancel during the wait posts no second one.
            s.stopPosted = true
            // The next attempt gets fresh incremental decoders (this one's saw no byte, or there is no retry).
            s.progressive = nil
            return .some(clocks)
        }
        guard let clocks else {
            finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
            return
        }
        if let (timeouts, running) = clocks { timeouts.stop(running) }
        if cancelTransfer { transfer.cancel() }
        callers.post([.imageDownloadStop], object: self)
        // Strong capture: the wait completes exactly once (elapsed, or cancelled by `finish`), which ends the cycle.
        wait.begin(seconds: delay) { outcome in
            guard outcome == .elapsed else { return }  // cancelled by `finish`, which answers the callers
            // Off the deadline monitor's thread: starting an attempt may read the HTTP cache from disk.
            DispatchQueue.global().async { self.startNextAttempt(after: wait) }
        }
    }

    /// The wait is over: the next attempt starts as the first did (`start()`), unless the operation ended meanwhile.
    private func startNextAttempt(after wait: RetryWait) {
        let proceeds: Bool = state.withLock { s in
            guard case .waitingToRetry(let current) = s.phase, current === wait else { return false }
            // From here a cancel answers the callers at once and the attempt below finishes (as during `start()`).
            s.phase = .starting
            return true
        }
        guard proceeds else { return }
        // The HTTP cache and cookies are consulted afresh: a response another download stored meanwhile is served.
        sendOrServe()
    }
}

extension OperationState {
    /// The transition into `.transferring`: one more attempt made.
    mutating func beginAttempt(_ attempt: Attempt) {
        if metrics.startedAt == nil { metrics.startedAt = Date() }  // the first attempt's start: durations span retries
        attemptsMade += 1
        // The attempt posts its own start (unless a cancel ends it before it does).
        if !cancelRequested { stopPosted = false }
        phase = .transferring(attempt)
    }

    /// Records the attempts made so far in `metrics.attemptCount` (an attempt cancelled by a timeout reported
    /// no transport metrics) and returns it: the attempt number the retry policy judges.
    mutating func countAttempts() -> Int {
        requestsSent = max(requestsSent, attemptsMade)
        metrics.attemptCount = requestsSent
        return requestsSent
    }
}

extension Attempt {
    /// Whether a caller saw more of this attempt than its response: a progress report with received bytes, or
    /// (with progressive decoding) body bytes that an incremental decoder may already have turned into a partial
    /// image. A retry would then show a caller bytes twice, so the failure is final (Docs/Options.md).
    func deliveredBeyondResponse(decodesProgressively: Bool) -> Bool {
        lastReportedSize > 0 || (decodesProgressively && !buffer.isEmpty)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries (Docs/Options.md): a failed attempt asks `RetryPlanner` whether to try again; if so the operation waits
/// (`DownloadStateMachine`'s `waitingToRetry`), then starts a fresh transfer the way `start()` does (the HTTP cache
/// and cookies consulted again).
///
/// Rules kept here:
/// - the policy is the operation's (its first caller's context, else the configuration), for every coalesced
///   caller; callers joining during the wait share the next attempt; each caller is answered exactly once, by
///   `finish`, after the last attempt;
/// - an attempt is retried whether or not a caller saw its bytes: progress may start again from the next
///   attempt's first byte, and partial images never go back to an older one (`IncrementalDecoding`'s
///   `partialImagesAfter`);
/// - a body cut short is resumed when the server allows it (`ResumePoint`): the next request asks for the rest
///   with `Range` and `If-Range`, and the bytes kept, the progress and the incremental decoders go on;
/// - every attempt posts its own `imageDownloadStart` / `imageDownloadStop` pair (a network-activity counter
///   sees no activity during the wait); `imageDownloadFinish` goes out once, with a successful answer;
/// - the idle timeout and `maximumDownloadDuration` are per attempt (each transfer has its own clocks);
/// - a cancel during the wait ends it at once (`finish` cancels the `RetryWait`) and answers `.cancelled`;
/// - nothing of a failed attempt is stored in the HTTP cache (only `complete` stores, after a success, and a
///   resumed body is stored whole, with the `200` it continues).
extension ImageDownloaderOperation {
    /// `transfer`'s attempt failed with `error`: retry after a backoff wait, or end the operation with `error`.
    func retryOrFinish(_ transfer: any TransportTransfer, _ error: ImageDownloaderError, cancelTransfer: Bool) {
        guard let policy = transferOptions.retryPolicy else {
            finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
            return
        }
        guard let failed = modifyState({ $0.failedAttempt(transfer) }) else {
            finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
            return
        }
        let decision = RetryPlanner(policy: policy).decide(
            after: error, response: failed.response?.urlResponse, attempt: failed.attempt)
        guard case .retry(let delay) = decision else {
            finish(.failure(error), cancelTransfer: cancelTransfer, ifRunning: transfer)
            return
        }
        observation?.retrying(after: error, attempt: failed.attempt, delay: delay)  // [Observability] the reason
        let wait = RetryWait(clock: DeadlineRetryClock(monitor: deadlineMonitor))
        // The clocks stop, the transfer is cancelled if asked, this attempt's stop goes out, the wait begins (a
        // cancel or another end that came first ends the download instead).
        modifyStateAndRunActions {
            $0.retryScheduled(transfer, error: error, wait: wait, delay: delay, cancelTransfer: cancelTransfer)
        }
    }

    /// The wait is over: the next attempt starts as the first did (`start()`), unless the operation ended meanwhile.
    func startNextAttempt(after wait: RetryWait) {
        guard modifyState({ $0.retryTimerFired(wait) }) else { return }
        // The HTTP cache and cookies are consulted afresh: a response another download stored meanwhile is served.
        sendOrServe()
    }
}

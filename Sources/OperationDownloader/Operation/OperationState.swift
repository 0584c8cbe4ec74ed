import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about an operation that changes, behind ONE lock (`ImageDownloaderOperation.state`).
///
/// The phase carries each phase's data, so a state that cannot happen cannot be written: a body buffer exists
/// only while a transfer runs, and only one transfer runs at a time.
struct OperationState {
    enum Phase {
        /// Created; `start()` not called yet.
        case pending
        /// `start()` is choosing how to get the bytes (HTTP cache, transport): a cancel now answers the
        /// callers at once, and `start()` finishes the operation.
        case starting
        /// One transfer in flight (one attempt).
        case transferring(Attempt)
        /// A failed attempt is to be retried (ImageDownloaderOperation+Retry.swift): the backoff wait runs; no
        /// transfer, no clocks. A cancel ends the wait at once; callers may still join (they share the next attempt).
        case waitingToRetry(RetryWait)
        /// The bytes are all here (or came from the HTTP cache): the final step (decrypt, decode per variant)
        /// runs, then the callers are answered.
        case completing
        /// Every caller answered, resources released.
        case finished
    }

    var phase = Phase.pending
    /// `cancel()` was called (it ends a running operation at once; before `start()` it is remembered).
    var cancelRequested = false
    /// The KVO-visible flags (`isExecuting`, `isFinished`).
    var isExecuting = false
    var isFinished = false
    var metrics: ImageDownloadMetrics
    /// Requests sent by the attempts so far (`metrics.attemptCount`).
    var requestsSent = 0
    /// Attempts started so far (a transfer cancelled by a timeout reports no metrics, yet it was an attempt).
    var attemptsMade = 0
    /// The current (finally: the last) response, after the response modifier (a Foundation response is made
    /// from it only when asked: `ImageDownloaderOperation.response`).
    var response: TransportResponse?
    /// The transport of an operation running without a downloader (made at start: on the session it was given,
    /// or owning one); the downloader's comes with the context.
    var transport: (any DownloadTransport)?
    var ownsTransport = false
    var progressive: ProgressiveDecoding?
    /// Decoding runs here (partial and final), never on the transport's thread. Made on first use.
    var coderQueue: DispatchQueue?
    /// `imageDownloadStop` went out (it is posted once, whichever way the download ends).
    var stopPosted = false
    /// Some caller has a progress handler: only then are progress snapshots of the callers taken.
    var hasProgressHandlers = false
    /// Some caller wants an image (not `.avoidDecodeImage`): only then is there a final decode step.
    var anyCallerDecodes = false
    /// Some caller wants partial images (`.progressiveLoad` and an image): only then does an attempt's start look
    /// for the variants to decode progressively.
    var anyCallerWantsPartialImages = false
    var backgroundTask: (provider: any BackgroundTaskProvider, id: Int)?
    /// Set by the downloader: runs once, on the finishing thread, just before `isFinished` flips.
    var finishing: (@Sendable () -> Void)?

    // The protocol's settable properties.
    var credential: URLCredential?
    var minimumProgressInterval: Double = 0
    var acceptableStatusCodes: IndexSet?
    var acceptableContentTypes: Set<String>?

    init(metrics: ImageDownloadMetrics) {
        self.metrics = metrics
    }

    /// The running attempt, if any (read its fields under the lock).
    var attempt: Attempt? {
        if case .transferring(let attempt) = phase { return attempt }
        return nil
    }

    /// Whether `transfer` is the running attempt's (events of an earlier transfer are stale).
    func isCurrent(_ transfer: any TransportTransfer) -> Bool {
        if case .transferring(let attempt) = phase { return attempt.transfer === transfer }
        return false
    }

    /// Runs `body` on the attempt of `transfer` when it is the running one; nil otherwise.
    func modifyAttempt<R>(of transfer: any TransportTransfer, _ body: (Attempt) -> R) -> R? {
        guard case .transferring(let attempt) = phase, attempt.transfer === transfer else { return nil }
        return body(attempt)
    }

    /// Stops the clocks of the running attempt for good; returns the registrations to unregister (outside the
    /// lock: the monitor has its own).
    mutating func stopTimeouts() -> (TransferTimeouts, TransferTimeouts.Running)? {
        guard case .transferring(let attempt) = phase else { return nil }
        attempt.timeoutsStopped = true
        defer { attempt.runningTimeouts = nil }
        return attempt.runningTimeouts.map { (attempt.timeouts, $0) }
    }

    /// The attempt of `transfer` when it is the running one, its activity noted (an event just arrived).
    func activeAttempt(of transfer: any TransportTransfer, now: UInt64) -> Attempt? {
        guard case .transferring(let attempt) = phase, attempt.transfer === transfer else { return nil }
        attempt.lastActivity = now
        return attempt
    }
}

/// One transfer and what it has received so far. A retry (ImageDownloaderOperation+Retry.swift) makes a new one.
///
/// A class, reached only through `OperationState.phase`: its fields are read and written only inside the
/// operation's state lock (a struct payload would be copied out of the enum and back on every chunk).
/// Its fields skip the runtime's dynamic exclusivity checks: the lock already serializes every access.
final class Attempt: @unchecked Sendable {  // guarded by the owning operation's `state` lock
    let transfer: any TransportTransfer
    let timeouts: TransferTimeouts
    /// The clocks' registrations while they run; nil before they start and once stopped.
    @exclusivity(unchecked) var runningTimeouts: TransferTimeouts.Running?
    /// The clocks were stopped (the transfer ended): they must not start after that.
    @exclusivity(unchecked) var timeoutsStopped = false
    /// The monitor time of the latest event (the idle timeout counts from it).
    @exclusivity(unchecked) var lastActivity: UInt64
    @exclusivity(unchecked) var buffer = Data()
    /// The announced body size (clamped later by what arrives), or -1.
    @exclusivity(unchecked) var expectedSize = -1
    @exclusivity(unchecked) var lastReportedSize = -1
    /// The current response is a 401 that an authentication retry should replace: its body is not kept.
    @exclusivity(unchecked) var awaitingAuthRetry = false
    @exclusivity(unchecked) var authAttempts = 0
    /// Checks the first body bytes for a non-image (nil once decided, or when not sniffing).
    @exclusivity(unchecked) var sniffer: BodySniffer?
    /// The server's response as received (before the response modifier), to store in the HTTP cache.
    @exclusivity(unchecked) var serverResponse: TransportResponse?
    /// A 304 answered from the HTTP cache: its stored response and body replace the (empty) 304.
    @exclusivity(unchecked) var revalidated: CachedHTTPResponse?

    init(transfer: any TransportTransfer, timeouts: TransferTimeouts, sniffs: Bool) {
        self.transfer = transfer
        self.timeouts = timeouts
        self.lastActivity = timeouts.monitor.now()
        self.sniffer = sniffs ? BodySniffer() : nil
    }
}

import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about one download that changes, as a value: its phase, the facts that outlive a phase, and every
/// transition between phases (the AsyncHTTPClient `HTTPRequestStateMachine` shape, Docs/Architecture.md has the
/// diagram).
///
/// It takes no lock of its own and runs no user code, but it is not yet a pure value: it holds the transfer's
/// `Attempt` (a class), the transport and the background task, makes the coder queue and reads the clock
/// (`Date()`) for the metrics. `ImageDownloaderOperation` holds it in its one lock and sends every event
/// through ONE helper (`modifyStateAndRunActions`, ImageDownloaderOperation+StateMachine.swift), which applies
/// the transition under the lock and performs the returned `Action` outside it. Each fact is stored once: the
/// phase (which also says which transfer is live), the attempt count (`requestsSent`), and whether
/// `imageDownloadStop` went out (`stopPosted`).
///
/// Impossible transitions trap in debug builds with the state in the message; in release builds they end the
/// download cleanly (`impossible(_:)`).
struct DownloadStateMachine {
    /// The phases. Each carries the data only that phase has.
    private enum State {
        /// Created; `start()` not called yet. → `starting`, `finished` (cancelled before start).
        case pending
        /// `start()` is choosing how to get the bytes (HTTP cache, shared fetch, transport): a cancel now answers
        /// the callers at once, and the starting thread finishes. → `transferring`, `completing`, `finished`.
        case starting
        /// One transfer in flight (one attempt); its events count only while it is this one.
        /// → `starting` (the HTTP cache's refetch), `waitingToRetry`, `completing`, `finished`.
        case transferring(Attempt)
        /// A failed attempt waits for its retry (Docs/Options.md): no transfer, no clocks. → `starting`, `finished`.
        case waitingToRetry(RetryWait)
        /// The bytes are all here: the final step runs, then the callers are answered. → `finished`.
        case completing
        /// Every caller answered, resources released. Final.
        case finished
    }

    /// The clocks of a running attempt: "stop the timeouts" and "stop the clocks" are this one action.
    struct Clocks {
        let timeouts: TransferTimeouts
        let running: TransferTimeouts.Running
    }

    /// What ending a download releases (finished operations can linger in an OperationQueue).
    struct Release {
        var transport: (any DownloadTransport)?
        var ownsTransport = false
        var backgroundTask: (provider: any BackgroundTaskProvider, id: Int)?
    }

    /// The end of a download, performed in this order: the retry wait cancelled, the clocks stopped, the transfer
    /// cancelled, every caller answered once after `notifications`, resources released, `isFinished` flipped.
    struct Finish {
        var ending: DownloadEnding
        var notifications: DownloadNotifications
        var retryWait: RetryWait?
        var clocks: Clocks?
        var transferToCancel: (any TransportTransfer)?
        var release: Release
        /// What the end tells the download's observation, read in the same transition.
        var observed: DownloadObservation.Ending
    }

    /// A failed attempt's retry: its clocks stopped, its transfer cancelled if asked, its own
    /// `imageDownloadStop` posted, then the wait begins.
    struct Retry {
        let wait: RetryWait
        let delay: TimeInterval
        var clocks: Clocks?
        var transferToCancel: (any TransportTransfer)?
    }

    /// What the operation does after a transition, outside the lock.
    enum Action {
        case none
        case stopClocks(Clocks)
        /// A transfer that must not run (the download ended before it began).
        case cancelTransfer(any TransportTransfer)
        // Boxed: these come once or twice per download, while every event returns an `Action` (mostly `.none`,
        // which then stays two words wide).
        indirect case finish(Finish)
        indirect case waitToRetry(Retry)
    }

    private var state = State.pending

    /// The phase without its data (what tests and assertions compare).
    enum Phase: Equatable, Sendable, CaseIterable { case pending, starting, transferring, waitingToRetry, completing, finished }

    var phase: Phase {
        switch state {
        case .pending: .pending
        case .starting: .starting
        case .transferring: .transferring
        case .waitingToRetry: .waitingToRetry
        case .completing: .completing
        case .finished: .finished
        }
    }
    /// `cancel()` was called (it ends a running operation at once; before `start()` it is remembered).
    private(set) var cancelRequested = false
    /// `imageDownloadStop` went out for the current attempt (each attempt posts its own; the end posts one only
    /// when the last attempt's went not out yet).
    private(set) var stopPosted = false
    /// Requests sent so far, every attempt and every re-send counted: `metrics.attemptCount`.
    private(set) var requestsSent = 0
    /// The KVO-visible flags (`isExecuting`, `isFinished`).
    private(set) var isExecuting = false
    private(set) var isFinished = false
    private var recordedMetrics: ImageDownloadMetrics
    /// The current (finally: the last) response, after the response modifier.
    private(set) var response: TransportResponse?
    /// The transport of an operation running without a downloader (made at its first attempt).
    private(set) var transport: (any DownloadTransport)?
    private var ownsTransport = false
    private(set) var incremental: IncrementalDecoding?
    /// [resume] A cut body the next attempt asks to continue (ResumePoint.swift); set when a retry is scheduled.
    private(set) var resumePoint: ResumePoint?
    /// Body bytes behind the newest partial image delivered by incremental decoders dropped since (a download
    /// that started over): new decoders deliver only partial images made from more bytes, so a caller never
    /// sees an older partial image after a newer one.
    private(set) var partialImagesThrough = 0
    private var coderQueue: DispatchQueue?
    /// What the callers so far want: progress snapshots, an image (a final decode), partial images.
    private(set) var hasProgressHandlers = false
    private(set) var anyCallerDecodes = false
    private(set) var anyCallerWantsPartialImages = false
    /// The final decode's token (`finalDecodeDue`), which a cancel from then on uses to end its wait for the
    /// decode memory budget.
    var decodeCancellation: ImageDecodingCancellation?
    private var backgroundTask: (provider: any BackgroundTaskProvider, id: Int)?
    /// Set by the downloader: runs once, on the finishing thread, just before `isFinished` flips.
    private var finishing: (@Sendable () -> Void)?

    /// Whether an impossible transition traps (debug builds); the table tests turn it off to see the release
    /// behaviour, a clean end.
    var trapsOnImpossibleTransitions = true

    // The protocol's settable properties (plain settings, read by the transitions).
    var credential: URLCredential?
    var minimumProgressInterval: Double = 0 {
        didSet { minimumProgressInterval = min(1, max(0, minimumProgressInterval)) }
    }
    var acceptableStatusCodes: IndexSet?
    var acceptableContentTypes: Set<String>?

    init(metrics: ImageDownloadMetrics) {
        self.recordedMetrics = metrics
    }

    /// The download's measurements; `attemptCount` is the one count of requests sent (0 when none was: an
    /// answer of the HTTP cache, a download that ended before its first request).
    var metrics: ImageDownloadMetrics {
        var metrics = recordedMetrics
        metrics.attemptCount = requestsSent
        return metrics
    }

    /// What the end of a download tells its observation (Observability/), read without copying the metrics.
    private var observedEnd: DownloadObservation.Ending {
        DownloadObservation.Ending(
            source: recordedMetrics.source, servedStale: recordedMetrics.servedStale,
            started: recordedMetrics.startedAt != nil, attempts: max(1, requestsSent))
    }

    /// The running attempt, if any (its fields are read and written only under the operation's lock).
    var attempt: Attempt? {
        if case .transferring(let attempt) = state { return attempt }
        return nil
    }

    /// Whether `transfer` is the running attempt's: the one place liveness is decided (events of an earlier
    /// transfer are stale).
    func isCurrent(_ transfer: any TransportTransfer) -> Bool {
        if case .transferring(let attempt) = state { return attempt.transfer === transfer }
        return false
    }

    /// The attempt of `transfer` when it is the running one.
    func attempt(of transfer: any TransportTransfer) -> Attempt? {
        guard case .transferring(let attempt) = state, attempt.transfer === transfer else { return nil }
        return attempt
    }

    /// The wait of `waitingToRetry`.
    var retryWait: RetryWait? {
        if case .waitingToRetry(let wait) = state { return wait }
        return nil
    }

    // The primitive moves, for the events in this folder's other files (the State enum stays private here).
    mutating func moveToStarting() { state = .starting }
    mutating func moveToTransferring(_ attempt: Attempt) { state = .transferring(attempt) }
    mutating func moveToWaiting(_ wait: RetryWait) { state = .waitingToRetry(wait) }
    mutating func moveToCompleting() { state = .completing }
    mutating func notePosted(stop: Bool) { stopPosted = stop }
    mutating func countRequests(_ count: Int) { requestsSent += count }
    mutating func recordMetrics(_ change: (inout ImageDownloadMetrics) -> Void) { change(&recordedMetrics) }
    mutating func setResponse(_ value: TransportResponse?) { response = value }
    mutating func setIncremental(_ value: IncrementalDecoding?) { incremental = value }
    mutating func setResumePoint(_ value: ResumePoint?) { resumePoint = value }

    /// The incremental decoders are dropped (the body starts over): the newest partial image they delivered is
    /// remembered, so the next decoders deliver none older (`partialImagesThrough`).
    mutating func dropIncremental() {
        if let incremental { partialImagesThrough = max(partialImagesThrough, incremental.partialImagesThrough) }
        incremental = nil
    }
    var redirectCount: Int { recordedMetrics.redirectCount }

    // MARK: - Lifecycle

    enum StartDecision: Equatable { case begin, alreadyStarted }

    /// `start()`: pending → starting, or → finished when a cancel came first (the callers answered `.cancelled`,
    /// nothing posted).
    mutating func start(cancelledBefore: Bool) -> (Action, StartDecision) {
        guard case .pending = state else { return (.none, .alreadyStarted) }
        if cancelRequested || cancelledBefore {
            state = .finished
            return (.finish(Finish(
                ending: .failure(ImageDownloaderError.cancelled), notifications: [], release: takeRelease(),
                observed: observedEnd)),
                .alreadyStarted)
        }
        state = .starting
        return (.none, .begin)
    }

    /// Where a cancel found the download.
    enum CancelPoint: Equatable { case beforeStart, running, over }

    /// `cancel()`: remembered; the operation answers the callers (before start) or finishes (running).
    mutating func cancel() -> CancelPoint {
        cancelRequested = true
        switch state {
        case .pending, .starting: return .beforeStart
        case .transferring, .waitingToRetry, .completing: return .running
        case .finished: return .over
        }
    }

    mutating func setExecuting(_ value: Bool) {
        isExecuting = value
    }

    mutating func setFinishingHook(_ body: @escaping @Sendable () -> Void) {
        finishing = body
    }

    /// The downloader's finishing hook, handed out once.
    mutating func takeFinishingHook() -> (@Sendable () -> Void)? {
        defer { finishing = nil }
        return finishing
    }

    mutating func markFinished() {
        isExecuting = false
        isFinished = true
    }

    mutating func adoptTransport(_ made: any DownloadTransport, owned: Bool) {
        transport = made
        ownsTransport = owned
    }

    mutating func setBackgroundTask(_ task: (provider: any BackgroundTaskProvider, id: Int)) {
        backgroundTask = task
    }

    /// A caller joined: what it wants is noted before its record is visible, so no report or decode misses it.
    mutating func callerJoined(reportsProgress: Bool, decodes: Bool, wantsPartialImages: Bool) {
        if reportsProgress { hasProgressHandlers = true }
        if decodes { anyCallerDecodes = true }
        if wantsPartialImages && decodes { anyCallerWantsPartialImages = true }
    }

    /// The download's start time, when nothing was sent (a refusal, or the HTTP cache's error).
    mutating func markStarted(keepingEarlier: Bool) {
        if !keepingEarlier || recordedMetrics.startedAt == nil { recordedMetrics.startedAt = Date() }
    }

    mutating func waitingForSharedFetch() {
        recordedMetrics.waitedForSharedFetch = true
    }

    /// The operation's coder queue, made on first use.
    mutating func madeCoderQueue() -> DispatchQueue {
        if let made = coderQueue { return made }
        let made = DispatchQueue(label: "OperationDownloader.coder")
        coderQueue = made
        return made
    }

    // MARK: - The end

    /// Ends the download with `ending`, from any phase but pending and finished (only the first end counts).
    /// `ifRunning`: only while that transfer's attempt runs. `imageDownloadStop` goes out here only when this
    /// attempt's did not yet, then `alsoPosting`.
    mutating func finish(
        _ ending: DownloadEnding, cancelTransfer: Bool, alsoPosting: DownloadNotifications = [],
        ifRunning transfer: (any TransportTransfer)? = nil
    ) -> Action {
        switch state {
        case .starting, .transferring, .waitingToRetry, .completing: break
        case .pending, .finished: return .none
        }
        if let transfer, !isCurrent(transfer) { return .none }
        var retryWait: RetryWait?
        if case .waitingToRetry(let wait) = state { retryWait = wait }
        let attempt = self.attempt
        let clocks = stopClocks()
        state = .finished
        recordedMetrics.finishedAt = Date()
        let postsStop = !stopPosted
        stopPosted = true
        return .finish(Finish(
            ending: ending, notifications: postsStop ? alsoPosting.union(.stop) : alsoPosting,
            retryWait: retryWait, clocks: clocks, transferToCancel: cancelTransfer ? attempt?.transfer : nil,
            release: takeRelease(), observed: observedEnd))
    }

    /// Hands out what the end releases; decoders go with it.
    private mutating func takeRelease() -> Release {
        defer {
            transport = nil
            incremental = nil
            resumePoint = nil
            backgroundTask = nil
        }
        return Release(transport: transport, ownsTransport: ownsTransport, backgroundTask: backgroundTask)
    }

    /// Stops the running attempt's clocks for good (they must not start after this); returns the registrations
    /// to unregister outside the lock (the monitor has its own).
    mutating func stopClocks() -> Clocks? {
        guard case .transferring(let attempt) = state else { return nil }
        attempt.timeoutsStopped = true
        defer { attempt.runningTimeouts = nil }
        return attempt.runningTimeouts.map { Clocks(timeouts: attempt.timeouts, running: $0) }
    }

    /// An event that cannot happen in `state`: a trap in debug builds (with the state), a clean end in release.
    mutating func impossible(_ event: String, file: StaticString = #fileID, line: UInt = #line) -> Action {
        if trapsOnImpossibleTransitions {
            assertionFailure("DownloadStateMachine: \(event) in state \(phase)", file: file, line: line)
        }
        return finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: true)
    }
}

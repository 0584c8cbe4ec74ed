import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads and decodes one URL for any number of coalesced callers (SDWebImage's
/// `SDWebImageDownloaderOperation`, with the fixes described in Docs/Downloader.md).
///
/// An asynchronous `Operation`. `start()` begins one transfer on the downloader's transport (or on a session of
/// its own); the transfer's events (`TransferClient`, in ImageDownloaderOperation+Transfer.swift) fill the
/// attempt's buffer; the final step decodes one image per variant the callers want; every caller is answered
/// exactly once (CallbackFanOut.swift). With URLSession, the session's callbacks pass through this class's
/// `URLSessionDataDelegate` methods (below, in this file), which a subclass may
/// override. Subclass it to customise downloads and set `ImageDownloaderConfiguration.operationClass`.
///
/// Files: StateMachine/ (`DownloadStateMachine`, the one locked state, and every transition of it; the one
/// helper that runs its events is in ImageDownloaderOperation+StateMachine.swift), ResponseValidation.swift,
/// RedirectPolicy.swift, TransferTimeouts.swift, OperationMetrics.swift, FinalDecodeStep.swift and FinalImages.swift (the final step
/// per variant), CallbackFanOut.swift, ImageDownloaderOperation+Finish.swift (the end),
/// ImageDownloaderOperation+HTTPCache.swift (the HTTP cache's refetch and stale answers),
/// ImageDownloaderOperation+Incremental.swift (partial images, for the callers that ask).
open class ImageDownloaderOperation: Operation, ImageDownloaderOperationProtocol, @unchecked Sendable {
    // Everything mutable is in `state` (one lock, reached only through `modifyStateAndRunActions`); callers are
    // in `callers` (their own barrier queue).

    /// Redirects followed before failing with `URLError.httpTooManyRedirects` (browsers use about 20).
    public static let maximumRedirects = RedirectPolicy.maximumRedirects

    /// The most buffer reserved from a `Content-Length` before any byte arrived (larger bodies grow as they come).
    static let maximumReservedBytes = 8 << 20

    let originalRequest: URLRequest
    /// `originalRequest.url`, read once (the getter bridges through corelibs' `NSURLRequest`).
    let requestURL: URL?
    let options: ImageDownloaderOptions
    /// The context given to `init` (the downloader's settings filled in under the first caller's): read only for
    /// callers added without a context of their own (`addHandlers(forProgress:completed:)`).
    let context: ImageDownloaderContext
    /// Everything this transfer runs with, resolved once from the context (Downloader/ResolvedOptions.swift,
    /// where the defaults live).
    let transferOptions: TransferOptions
    let callers: CallbackFanOut
    /// The HTTP cache (`.useURLCache`, `.ignoreCachedResponse`) and cookies (`.handleCookies`) for this download;
    /// nil when it uses neither (`HTTPCacheTransaction.isNeeded`).
    let httpTransaction: HTTPCacheTransaction?
    /// The downloader's timer, or the shared one (`transferOptions.deadlineMonitor`, read once).
    let deadlineMonitor: DeadlineMonitor
    /// The session given to `init` (the downloader's), used when no transport came with the context.
    let givenSession: URLSession?
    let state: Locked<DownloadStateMachine>
    /// Metrics, spans, trace context and log messages of this download; nil when there is nothing to report to
    /// (Observability/DownloadObservation.swift): every report is then one nil check.
    let observation: DownloadObservation?

    /// `session` is borrowed (the downloader's); with `nil` the operation creates and owns one. `context`: the
    /// settings of this download (nil fields take the defaults of Docs/Options.md); the downloader passes the
    /// first caller's with its own settings filled in.
    public required init(
        request: URLRequest, session: URLSession?, options: ImageDownloaderOptions, context: ImageDownloaderContext?
    ) {
        // Stored first and read back from storage below: the one copy a borrowed context needs.
        self.context = context ?? .empty
        let transfer = TransferOptions(options: options, context: self.context)
        self.originalRequest = request
        self.requestURL = request.url
        self.givenSession = session
        self.options = options
        self.transferOptions = transfer
        self.deadlineMonitor = transfer.deadlineMonitor
        let observation = DownloadObservation.make(
            telemetry: transfer.plumbing?.resources.telemetry, context: self.context, url: requestURL)
        self.observation = observation
        self.callers = CallbackFanOut(
            callbackQueue: transfer.callbackQueue, postsNotifications: transfer.postsNotifications, url: requestURL,
            memoryCache: transfer.plumbing?.memoryCache, observation: observation)
        self.state = Locked(DownloadStateMachine(metrics: ImageDownloadMetrics(queuedAt: Date())))
        self.httpTransaction = HTTPCacheTransaction.isNeeded(
            cache: transfer.httpCache, useURLCache: transfer.useURLCache, handleCookies: transfer.handlesCookies)
            ? HTTPCacheTransaction(
                request: request, cache: transfer.httpCache, useURLCache: transfer.useURLCache,
                ignoreCachedResponse: transfer.ignoresCachedResponse, handleCookies: transfer.handlesCookies,
                // [HTTP cache] background revalidation (stale-while-revalidate): the downloader's, else one of its own
                revalidator: transfer.plumbing == nil ? .standalone(operationClass: Self.self, session: session) : transfer.plumbing?.revalidator)
            : nil
        super.init()
    }

    // MARK: - Protocol properties

    public var request: URLRequest? { originalRequest }
    /// Foundation's response, made on first use from the transport's (Loading/Transport/TransportResponse.swift).
    public var response: URLResponse? { modifyState { $0.response }?.urlResponse }
    /// The data task of the current transfer when it runs on URLSession (nil on another transport).
    public var dataTask: URLSessionTask? { (modifyState { $0.attempt?.transfer } as? URLSessionTransfer)?.dataTask }
    public var metrics: ImageDownloadMetrics? { modifyState { $0.metrics } }
    public var credential: URLCredential? {
        get { modifyState { $0.credential } }
        set { modifyState { $0.credential = newValue } }
    }
    public var minimumProgressInterval: Double {
        get { modifyState { $0.minimumProgressInterval } }
        set { modifyState { $0.minimumProgressInterval = newValue } }  // clamped to 0...1 by the machine
    }
    public var acceptableStatusCodes: IndexSet? {
        get { modifyState { $0.acceptableStatusCodes } }
        set { modifyState { $0.acceptableStatusCodes = newValue } }
    }
    public var acceptableContentTypes: Set<String>? {
        get { modifyState { $0.acceptableContentTypes } }
        set {
            let lowercased = newValue.map { Set($0.map { $0.lowercased() }) }
            modifyState { $0.acceptableContentTypes = lowercased }
        }
    }

    /// The options this operation was created with.
    public var downloadOptions: ImageDownloaderOptions { options }

    /// Also the transfer's priority (`.high` 0.75, `.low` 0.25, else 0.5), raised with it when a caller with a
    /// higher priority joins.
    open override var queuePriority: Operation.QueuePriority {
        get { super.queuePriority }
        set {
            super.queuePriority = newValue
            modifyState { $0.attempt?.transfer }?.setPriority(TransferRequest.priority(for: newValue))
        }
    }

    // MARK: - Operation state (manual KVO)

    open override var isAsynchronous: Bool { true }
    open override var isExecuting: Bool { modifyState { $0.isExecuting } }
    open override var isFinished: Bool { modifyState { $0.isFinished } }

    func setExecuting(_ value: Bool) {
        willChangeValue(forKey: "isExecuting")
        modifyState { $0.setExecuting(value) }
        didChangeValue(forKey: "isExecuting")
    }

    /// Runs the downloader's finishing hook on this thread, then flips `isFinished` (and `isExecuting`).
    func setFinished() {
        let hook = modifyState { $0.takeFinishingHook() }
        hook?()
        let wasExecuting = modifyState { $0.isExecuting }
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        willChangeValue(forKey: "isFinished")
        modifyState { $0.markFinished() }
        didChangeValue(forKey: "isFinished")
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
    }

    // MARK: - Hooks the downloader uses (protocol requirements)

    /// Runs `body` once, just before `isFinished` flips. This class calls it on the finishing thread (unlike a
    /// `completionBlock`, which corelibs runs from a block on a global queue, it costs no thread hop);
    /// subclasses, which may override `start()`/`cancel()`, get a `completionBlock` instead.
    open func onFinishing(_ body: @escaping @Sendable () -> Void) {
        guard type(of: self) == ImageDownloaderOperation.self else {
            completionBlock = body
            return
        }
        modifyState { $0.setFinishingHook(body) }
    }

    // MARK: - Callers

    public func addHandlers(
        forProgress progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?
    ) -> AnyObject? {
        addHandlers(forProgress: progress, completed: completed, options: options, context: nil)
    }

    /// Adds a caller with its own options and context: its handlers run on its `callbackQueue` (nil: the
    /// operation's), it gets its own variant of the image (Docs/Options.md: thumbnail size, scale, transformer...),
    /// and partial images only if its own `options` have `.progressiveLoad`, sharing the transfer with every other
    /// caller. The options that change the transfer (`ImageDownloaderOptions.perTransfer`) are the operation's.
    /// `context` nil: the operation's own settings.
    open func addHandlers(
        forProgress progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?,
        options: ImageDownloaderOptions, context callerContext: ImageDownloaderContext?
    ) -> AnyObject? {
        let caller = if let callerContext {
            CallerOptions(options: options, context: callerContext, defaults: transferOptions.callerDefaults)
        } else {
            CallerOptions(options: self.options, context: context, defaults: transferOptions.callerDefaults)
        }
        return addCaller(progress: progress, completed: completed, caller: caller)
    }

    /// Adds a caller whose settings are resolved already (the downloader's, for this class itself).
    func addCaller(
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?, caller: CallerOptions
    ) -> AnyObject? {
        add(CallbackRecord(progress: progress, completed: completed, caller: caller))
    }

    private func add(_ record: CallbackRecord) -> AnyObject? {
        // Set before the record is visible, so no progress report (or final decode) can miss it.
        if record.progress != nil || record.variant.decoding != nil {
            modifyState {
                $0.callerJoined(
                    reportsProgress: record.progress != nil, decodes: record.variant.decoding != nil,
                    wantsPartialImages: record.wantsPartialImages)
            }
        }
        guard callers.add(record) else { return nil }
        // A caller that wants partial images gets an incremental decoder for its variant (fed the bytes so far)
        // when it joins a running transfer, whether or not the callers before it wanted any.
        if record.wantsPartialImages, let decoding = record.variant.decoding { addIncrementalStream(for: decoding) }
        return record
    }

    @discardableResult
    public func cancel(_ token: AnyObject?) -> Bool {
        guard let record = token as? CallbackRecord else { return false }
        let (removed, wasLast) = callers.remove(record)
        guard removed else { return false }
        record.markCancelled()
        observation?.answered(ImageDownloaderError.cancelled)
        record.deliverFinal(image: nil, data: nil, error: ImageDownloaderError.cancelled)
        if wasLast { cancel() }
        return wasLast
    }

    // MARK: - Lifecycle

    open override func start() {
        observation?.started()
        let cancelledBefore = isCancelled
        // Cancelled before: the callers are answered `.cancelled` and the operation finishes (the machine's action).
        guard modifyStateAndRunActions({ $0.start(cancelledBefore: cancelledBefore) }) == .begin else { return }
        setExecuting(true)
        beginBackgroundTaskIfNeeded()
        sendOrServe()
    }

    /// The HTTP cache decides how this attempt gets the bytes: a transfer, a stored response, or an error.
    /// Every attempt (the first, and each retry) starts here.
    func sendOrServe() {
        // [HTTP cache] the status check travels with the request: a stored error status is answered only to a
        // download that rejects it (without a cache, nothing to read: no closure, no lock).
        let begun: HTTPCacheTransaction.Start
        if let httpTransaction, httpTransaction.mayStore {
            let codes = modifyState { $0.acceptableStatusCodes }
            switch httpTransaction.beginSharing(acceptsStatus: { ResponseValidation.isAcceptable(status: $0, codes: codes) }) {
            case .proceed(let start):
                begun = start
            case .wait(let wait):
                waitForSharedFetch(wait)  // [HTTP cache] a shared cache's single-flight: ImageDownloaderOperation+HTTPCache.swift
                return
            }
        } else {
            begun = httpTransaction?.begin() ?? HTTPCacheTransaction.beginWithoutCache(originalRequest)
        }
        switch begun {
        case .send(let request):
            startAttempt(request)
        case .serveFromCache(let cached):
            serveFromHTTPCache(cached)
        case .fail(let error):
            modifyStateAndRunActions {
                $0.markStarted(keepingEarlier: true)
                return $0.finish(.failure(ImageDownloaderError.network(error)), cancelTransfer: false)
            }
        }
    }

    open override func cancel() {
        let at = modifyState { $0.cancel() }
        super.cancel()
        switch at {
        case .beforeStart:
            // Answer now; `start()` finishes the operation (it must never be finished before it started).
            callers.answerAll(.failure(ImageDownloaderError.cancelled), after: [], object: self)
            // [HTTP cache] a wait for another process's fetch ends now, and finishes the operation.
            httpTransaction?.cancelSharedFetchWait()
        case .running:
            modifyState { $0.decodeCancellation }?.cancel()  // a final decode waiting for the decode memory budget stops waiting
            finish(error: ImageDownloaderError.cancelled, cancelTransfer: true)
        case .over:
            break
        }
    }

    // MARK: - URLSessionDataDelegate
    //
    // With URLSession the session's callbacks for this operation's tasks arrive here (routed by the downloader's
    // `SessionRouter`, or from the operation's own session). Override them to observe or alter the exchange;
    // call `super` to let the download go on: these default implementations hand each event to the
    // `URLSessionTransfer` that owns the task, which applies the corelibs workarounds and reports it to the
    // operation (`TransferClient`). Declared here, not in an extension, so that subclasses can override them.

    open func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = sessionTransfer(for: dataTask) else {
            completionHandler(.allow)
            return
        }
        transfer.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        sessionTransfer(for: dataTask)?.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    open func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        sessionTransfer(for: task)?.urlSession(session, task: task, didCompleteWithError: error)
    }

    open func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let transfer = sessionTransfer(for: task) else {
            // Never `.performDefaultHandling`: it hangs forever on Linux.
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        transfer.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
    }

    open func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // A task that is no longer the operation's was cancelled: its completion handler must not run (corelibs
        // traps when it runs after the cancel).
        sessionTransfer(for: task)?.urlSession(
            session, task: task, willPerformHTTPRedirection: response, newRequest: request,
            completionHandler: completionHandler)
    }

    /// The URLSession transfer of the running attempt (it ignores callbacks of any task but its own).
    private func sessionTransfer(for task: URLSessionTask) -> URLSessionTransfer? {
        modifyState { $0.attempt?.transfer } as? URLSessionTransfer
    }

    private func beginBackgroundTaskIfNeeded() {
        guard transferOptions.continuesInBackground, let provider = BackgroundTasks.provider else { return }
        let id = provider.beginBackgroundTask { [weak self] in self?.cancel() }
        guard let id else { return }
        modifyState { $0.setBackgroundTask((provider, id)) }
    }
}

extension ImageDownloaderOperation: URLSessionDelegateProviding {
    /// A subclass may override the delegate methods, so the session's callbacks for its tasks come through them.
    /// This class's own methods only hand each event to the transfer: the router skips them.
    var sessionDelegate: (any URLSessionDataDelegate)? {
        type(of: self) == ImageDownloaderOperation.self ? nil : self
    }
}

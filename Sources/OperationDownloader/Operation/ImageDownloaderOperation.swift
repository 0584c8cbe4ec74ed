import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads and decodes one URL for any number of coalesced callers (SDWebImage's
/// `SDWebImageDownloaderOperation`, with the fixes described in SPEC §5).
///
/// An asynchronous `Operation`: `start()` creates the data task, the session's delegate callbacks (routed
/// here by the downloader, or from the operation's own session) fill the buffer, and the operation finishes
/// after every caller has been answered exactly once. Subclass it to customise downloads and set
/// `ImageDownloaderConfiguration.operationClass`.
open class ImageDownloaderOperation: Operation, ImageDownloaderOperationProtocol, @unchecked Sendable {
    // `lock` guards every mutable stored property below; callers are in `callbacks` (its own barrier queue).

    /// Redirects followed before failing with `URLError.httpTooManyRedirects` (browsers use about 20).
    public static let maximumRedirects = 20

    /// The most buffer reserved from a `Content-Length` before any byte arrived (larger bodies grow as they come).
    static let maximumReservedBytes = 8 << 20

    private enum Phase { case pending, starting, running, done }

    private let lock = NSLock()
    private let callbacks = CallbackStore()
    private let originalRequest: URLRequest
    private let options: ImageDownloaderOptions
    private let context: ImageDownloaderContext
    private let callbackQueue: DispatchQueue
    /// Decoding (partial and final) runs on `coderQueue`, never on the session's delegate queue. Created on
    /// first use: a download that needs no decoding, decryptor or cache write never makes one.
    private var coderQueueStorage: DispatchQueue?
    private var coderQueue: DispatchQueue {
        lock.withLock {
            if let made = coderQueueStorage { return made }
            let made = DispatchQueue(label: "OperationDownloader.coder")
            coderQueueStorage = made
            return made
        }
    }

    private var phase = Phase.pending
    private var cancelRequested = false
    private var executingFlag = false
    private var finishedFlag = false
    private var borrowedSession: URLSession?
    private var ownedSession: URLSession?
    private var task: URLSessionDataTask?
    private var currentResponse: URLResponse?
    private var buffer = Data()
    private var expectedSize = -1
    private var lastReportedSize = -1
    /// The current response is a 401 that an authentication retry should replace: its body is not reported.
    private var awaitingAuthRetry = false
    private var authAttempts = 0
    private var stopPosted = false
    /// Some caller registered a progress handler: only then are progress snapshots of the callers taken
    /// (each read of the callback store is a barrier-queue `sync`, on every chunk of every download).
    private var hasProgressHandlers = false
    /// Our redirect handler is deciding: `task.cancel()` waits until its completion handler was called.
    /// corelibs Foundation traps ("Received callback for HTTP redirection, but we're not waiting for it")
    /// when a redirect completion handler runs after the task was cancelled, so the two are serialized.
    private var redirectPending = false
    /// A cancel requested while `redirectPending`: issued right after the redirect completion handler.
    private var deferredCancel: URLSessionDataTask?
    /// `task.cancel()` was issued: a redirect completion handler must never be called after this.
    private var taskCancelIssued = false
    private var progressive: ProgressiveDecoding?
    /// The total-timeout registration with the shared deadline monitor, while running.
    private var timeoutRegistration: DeadlineMonitor.Registration?
    private var backgroundTask: (provider: any BackgroundTaskProvider, id: Int)?
    private var measured: ImageDownloadMetrics
    private var storedCredential: URLCredential?
    private var storedMinimumProgressInterval: Double = 0
    private var storedStatusCodes: IndexSet?
    private var storedContentTypes: Set<String>?
    /// Set by the downloader: told about the task before it is resumed, so callbacks route without a search.
    private var taskCreated: (@Sendable (URLSessionTask) -> Void)?
    /// The HTTP cache (`.useURLCache`, `.ignoreCachedResponse`) and cookies (`.handleCookies`) for this download.
    private let httpTransaction: HTTPCacheTransaction
    /// The server's response as received (before the response modifier), to store in the HTTP cache.
    private var serverResponse: HTTPURLResponse?
    /// A 304 answered from the HTTP cache: its stored response and body replace the (empty) 304.
    private var revalidated: CachedHTTPResponse?

    func onTaskCreated(_ body: @escaping @Sendable (URLSessionTask) -> Void) {
        lock.withLock { taskCreated = body }
    }

    /// Set by the downloader: runs once, on the finishing thread, just before `isFinished` flips. Unlike a
    /// `completionBlock` (which corelibs runs from a block on a global queue), it costs no thread hop.
    private var finishing: (@Sendable () -> Void)?

    func onFinishing(_ body: @escaping @Sendable () -> Void) {
        lock.withLock { finishing = body }
    }

    /// `session` is borrowed (the downloader's); with `nil` the operation creates and owns one.
    public required init(
        request: URLRequest, session: URLSession?, options: ImageDownloaderOptions, context: ImageDownloaderContext?
    ) {
        self.originalRequest = request
        self.borrowedSession = session
        self.options = options
        self.context = context ?? ImageDownloaderContext()
        self.callbackQueue = self.context.callbackQueue ?? ImageDownloader.platformDefaultCallbackQueue
        self.measured = ImageDownloadMetrics(queuedAt: Date())
        self.httpTransaction = HTTPCacheTransaction(
            request: request, cache: self.context.httpCache, useURLCache: options.contains(.useURLCache),
            ignoreCachedResponse: options.contains(.ignoreCachedResponse), handleCookies: options.contains(.handleCookies),
            revalidator: self.context.httpCacheRevalidator)  // [HTTP cache] background revalidation (stale-while-revalidate)
        super.init()
    }

    // MARK: - Protocol properties

    public var request: URLRequest? { originalRequest }
    public var response: URLResponse? { lock.withLock { currentResponse } }
    public var dataTask: URLSessionTask? { lock.withLock { task } }
    public var metrics: ImageDownloadMetrics? { lock.withLock { measured } }
    public var credential: URLCredential? {
        get { lock.withLock { storedCredential } }
        set { lock.withLock { storedCredential = newValue } }
    }
    public var minimumProgressInterval: Double {
        get { lock.withLock { storedMinimumProgressInterval } }
        set { lock.withLock { storedMinimumProgressInterval = min(1, max(0, newValue)) } }
    }
    public var acceptableStatusCodes: IndexSet? {
        get { lock.withLock { storedStatusCodes } }
        set { lock.withLock { storedStatusCodes = newValue } }
    }
    public var acceptableContentTypes: Set<String>? {
        get { lock.withLock { storedContentTypes } }
        set { lock.withLock { storedContentTypes = newValue.map { Set($0.map { $0.lowercased() }) } } }
    }

    /// The options this operation was created with.
    public var downloadOptions: ImageDownloaderOptions { options }

    // MARK: - Operation state (manual KVO)

    open override var isAsynchronous: Bool { true }
    open override var isExecuting: Bool { lock.withLock { executingFlag } }
    open override var isFinished: Bool { lock.withLock { finishedFlag } }

    private func setExecuting(_ value: Bool) {
        willChangeValue(forKey: "isExecuting")
        lock.withLock { executingFlag = value }
        didChangeValue(forKey: "isExecuting")
    }

    private func setFinished() {
        let hook: (@Sendable () -> Void)? = lock.withLock {
            defer { finishing = nil }
            return finishing
        }
        hook?()
        let wasExecuting = lock.withLock { executingFlag }
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        willChangeValue(forKey: "isFinished")
        lock.withLock {
            executingFlag = false
            finishedFlag = true
        }
        didChangeValue(forKey: "isFinished")
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
    }

    // MARK: - Callers

    public func addHandlers(
        forProgress progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?
    ) -> AnyObject? {
        let record = CallbackRecord(progress: progress, completed: completed, queue: callbackQueue)
        return add(record)
    }

    /// Adds a caller whose handlers run on `queue` instead of the operation's callback queue.
    func addHandlers(
        forProgress progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?,
        queue: DispatchQueue?
    ) -> AnyObject? {
        let record = CallbackRecord(progress: progress, completed: completed, queue: queue ?? callbackQueue)
        return add(record)
    }

    private func add(_ record: CallbackRecord) -> AnyObject? {
        // Set before the record is visible, so no progress report can miss it.
        if record.progress != nil { lock.withLock { hasProgressHandlers = true } }
        return callbacks.add(record) ? record : nil
    }

    /// Reports progress to every caller that has a progress handler.
    private func reportProgress(_ received: Int, _ expected: Int) {
        guard lock.withLock({ hasProgressHandlers }) else { return }
        let url = originalRequest.url
        for record in callbacks.snapshot { record.deliverProgress(received, expected, url) }
    }

    @discardableResult
    public func cancel(_ token: AnyObject?) -> Bool {
        guard let record = token as? CallbackRecord else { return false }
        let (removed, wasLast) = callbacks.remove(record)
        guard removed else { return false }
        record.markCancelled()
        record.deliverFinal(image: nil, data: nil, error: ImageDownloaderError.cancelled)
        if wasLast { cancel() }
        return wasLast
    }

    // MARK: - Lifecycle

    open override func start() {
        let finishAtOnce: Bool? = lock.withLock {
            guard phase == .pending else { return nil }
            if cancelRequested || isCancelled {
                phase = .done
                return true
            }
            phase = .starting
            return false
        }
        guard let finishAtOnce else { return }
        if finishAtOnce {
            answerAll(error: ImageDownloaderError.cancelled)
            releaseResources()
            setFinished()
            return
        }
        setExecuting(true)
        beginBackgroundTaskIfNeeded()

        let requestToSend: URLRequest
        // [HTTP cache] the status check travels with the request: a stored error status is answered only to a
        // download that rejects it.
        let acceptedCodes = acceptableStatusCodes
        switch httpTransaction.begin(acceptsStatus: { acceptedCodes?.contains($0) ?? (200..<300).contains($0) }) {
        case .send(let request):
            requestToSend = request
        case .serveFromCache(let cached):
            serveFromHTTPCache(cached)
            return
        case .fail(let error):
            let cancelled: Bool = lock.withLock {
                measured.startedAt = Date()
                phase = .running
                return cancelRequested
            }
            finish(error: cancelled ? ImageDownloaderError.cancelled : ImageDownloaderError.network(error), cancelTask: false)
            return
        }
        let session = lock.withLock { borrowedSession } ?? makeOwnedSession()
        let newTask = session.dataTask(with: requestToSend)
        let cancelledWhileStarting: Bool = lock.withLock {
            task = newTask
            measured.startedAt = Date()
            phase = .running
            return cancelRequested
        }
        lock.withLock { taskCreated }?(newTask)
        if cancelledWhileStarting {
            finish(error: ImageDownloaderError.cancelled, cancelTask: true)
            return
        }
        if options.contains(.progressiveLoad), context.decryptor == nil {
            let made = ProgressiveDecoding(
                queue: coderQueue, manager: context.codersManager ?? .shared, options: decodingOptions(),
                interval: context.progressiveDecodingInterval ?? 0.1)
            lock.withLock { progressive = made }
        }
        reportProgress(0, -1)
        post(.imageDownloadStart)
        scheduleTimeout()
        newTask.resume()
    }

    /// A fresh (or policy-allowed) HTTP cache entry: no task; the same callbacks, notifications and decoding
    /// as a download, with metrics saying the cache was the source.
    private func serveFromHTTPCache(_ cached: CachedHTTPResponse) {
        // [HTTP cache] a stored 404/410 (or the 504 of only-if-cached): the same error, without a request.
        let rejected = !isAcceptable(status: cached.statusCode)
        let cancelled: Bool = lock.withLock {
            let now = Date()
            measured.startedAt = now
            measured.responseAt = now
            measured.firstByteAt = now
            measured.statusCode = cached.statusCode
            measured.receivedBytes = cached.data.count
            measured.expectedBytes = cached.data.count
            measured.source = cached.source  // [HTTP cache]
            measured.servedStale = cached.isStale  // [HTTP cache]
            currentResponse = cached.response
            phase = .running
            stopPosted = !rejected  // [HTTP cache]
            return cancelRequested
        }
        if cancelled {
            finish(error: ImageDownloaderError.cancelled, cancelTask: false)
            return
        }
        if rejected {  // [HTTP cache]
            reportProgress(0, -1)
            post(.imageDownloadStart)
            finish(error: ImageDownloaderError.invalidDownloadStatusCode(cached.statusCode), cancelTask: false)
            return
        }
        reportProgress(0, -1)
        post(.imageDownloadStart)
        reportProgress(0, cached.data.count)
        post(.imageDownloadReceiveResponse)
        reportProgress(cached.data.count, cached.data.count)
        post(.imageDownloadStop, .imageDownloadFinish)
        coderQueue.async { [self] in decodeAndFinish(cached.data, progressive: nil) }
    }

    /// [HTTP cache] A 304 whose validator matches no stored response (RFC 9111 §4.3.4): the download starts
    /// again with `request` (unconditional) on a new task; the old task is cancelled and its late callbacks
    /// are ignored (`isCurrent`).
    private func refetch(_ request: URLRequest, replacing old: URLSessionDataTask) {
        guard let session = lock.withLock({ borrowedSession ?? ownedSession }) else {
            finish(error: ImageDownloaderError.notModified, cancelTask: true)
            return
        }
        let newTask = session.dataTask(with: request)
        let replaced: Bool = lock.withLock {
            guard phase == .running, task === old, !cancelRequested else { return false }
            task = newTask
            buffer = Data()
            revalidated = nil
            serverResponse = nil
            return true
        }
        guard replaced else { return }
        old.cancel()
        lock.withLock { taskCreated }?(newTask)
        newTask.resume()
    }

    open override func cancel() {
        let phaseAtCancel: Phase = lock.withLock {
            cancelRequested = true
            return phase
        }
        super.cancel()
        switch phaseAtCancel {
        case .pending, .starting:
            // Answer now; `start()` finishes the operation (it must never be finished before it started).
            answerAll(error: ImageDownloaderError.cancelled)
        case .running:
            finish(error: ImageDownloaderError.cancelled, cancelTask: true)
        case .done:
            break
        }
    }

    /// Ends the download: answers every remaining caller once, releases buffers, decoder, task and session,
    /// then flips `isFinished`. Only the first call has an effect. `alsoPosting` are notifications that go out
    /// right after `imageDownloadStop` (when this call posts it) and before the answers.
    private func finish(
        image: DecodedImage? = nil, data: Data? = nil, error: (any Error)?, cancelTask: Bool,
        alsoPosting: [Notification.Name] = []
    ) {
        struct Taken {
            var task: URLSessionDataTask?
            var postStop: Bool
        }
        let taken: Taken? = lock.withLock {
            guard phase == .running else { return nil }
            phase = .done
            measured.finishedAt = Date()
            let postStop = !stopPosted
            stopPosted = true
            return Taken(task: task, postStop: postStop)
        }
        guard let taken else { return }
        let deferred = cancelTask ? cancelSafely(taken.task) : false
        let notifications = (taken.postStop ? [.imageDownloadStop] : []) + alsoPosting
        answerAll(image: image, data: data, error: error, after: notifications)
        // With a cancel deferred behind a redirect decision, the owned session must not cancel the task either.
        releaseResources(cancelSession: cancelTask && !deferred)
        setFinished()
    }

    /// Cancels `task` now, or right after the redirect completion handler when one is being decided
    /// (see `redirectPending`). Returns true when the cancel was deferred.
    private func cancelSafely(_ task: URLSessionDataTask?) -> Bool {
        guard let task else { return false }
        let deferNow: Bool = lock.withLock {
            if redirectPending {
                deferredCancel = task
                return true
            }
            taskCancelIssued = true
            return false
        }
        if !deferNow { task.cancel() }
        return deferNow
    }

    private func answerAll(error: any Error) {
        answerAll(image: nil, data: nil, error: error, after: [])
    }

    /// Closes the callback store and answers every caller once. The notifications and the answers of the
    /// callers on the operation's callback queue go out in ONE block on that queue, in this order (a thread
    /// hop per caller and per notification was measurable); callers with their own queue get a block there.
    private func answerAll(image: DecodedImage?, data: Data?, error: (any Error)?, after notifications: [Notification.Name]) {
        let notifications = postsNotifications ? notifications : []
        var sameQueue: [ImageDownloaderCompletedHandler] = []
        for record in callbacks.closeAndTakeAll() {
            guard let completed = record.completed else { continue }
            if record.queue === callbackQueue {
                sameQueue.append(completed)
            } else {
                record.deliverFinal(image: image, data: data, error: error)
            }
        }
        guard !notifications.isEmpty || !sameQueue.isEmpty else { return }
        callbackQueue.async { [self, sameQueue] in
            for name in notifications { NotificationCenter.default.post(name: name, object: self) }
            for completed in sameQueue { completed(image, data, error, true) }
        }
    }

    /// Drops everything big before `isFinished` flips: finished operations can linger in OperationQueue.
    private func releaseResources(cancelSession: Bool = false) {
        let (session, timeout, background) = lock.withLock {
            let taken = (ownedSession, timeoutRegistration, backgroundTask)
            ownedSession = nil
            borrowedSession = nil
            timeoutRegistration = nil
            backgroundTask = nil
            task = nil
            buffer = Data()
            progressive = nil
            taskCreated = nil
            revalidated = nil
            serverResponse = nil
            return taken
        }
        httpTransaction.release()
        if let timeout { DeadlineMonitor.shared.unregister(timeout) }
        if cancelSession { session?.invalidateAndCancel() } else { session?.finishTasksAndInvalidate() }
        if let background { background.provider.endBackgroundTask(background.id) }
    }

    private func makeOwnedSession() -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 15
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        lock.withLock { ownedSession = session }
        return session
    }

    private func beginBackgroundTaskIfNeeded() {
        guard options.contains(.continueInBackground), let provider = BackgroundTasks.provider else { return }
        let id = provider.beginBackgroundTask { [weak self] in self?.cancel() }
        guard let id else { return }
        lock.withLock { backgroundTask = (provider, id) }
    }

    /// The total download timeout: URLSession on Linux ignores the resource timeout, so the package enforces it,
    /// with one timer shared by every download (see `DeadlineMonitor`).
    private func scheduleTimeout() {
        let seconds = max(1, context.downloadTimeout ?? 15)
        let registration = DeadlineMonitor.shared.register(after: seconds) { [weak self] in
            self?.finish(error: ImageDownloaderError.network(URLError(.timedOut)), cancelTask: true)
        }
        let keep: Bool = lock.withLock {
            guard phase == .running else { return false }
            timeoutRegistration = registration
            return true
        }
        // Finished before this point (a cancel from the start progress callback): releaseResources has run.
        if !keep { DeadlineMonitor.shared.unregister(registration) }
    }

    /// `ImageDownloaderContext.postsNotifications`; an operation made without a downloader posts them.
    private var postsNotifications: Bool { context.postsNotifications ?? true }

    /// Posts `names` in order from one callback-queue block (a block per notification was a measurable
    /// share of a small download's CPU, Docs/Benchmarks.md).
    private func post(_ names: Notification.Name...) {
        guard postsNotifications else { return }
        callbackQueue.async { [self] in
            for name in names { NotificationCenter.default.post(name: name, object: self) }
        }
    }

    /// Whether delegate callbacks for `task` still concern this operation.
    private func isCurrent(_ task: URLSessionTask) -> Bool {
        lock.withLock { phase == .running && self.task === task }
    }

    // MARK: - Validation

    private func isAcceptable(status: Int) -> Bool {
        if let codes = acceptableStatusCodes { return codes.contains(status) }
        return (200..<300).contains(status)
    }

    private func isAcceptable(mimeType: String?) -> Bool {
        guard let accepted = acceptableContentTypes else { return true }
        guard let mime = mimeType?.lowercased() else { return false }
        if accepted.contains(mime) { return true }
        guard let slash = mime.firstIndex(of: "/") else { return false }
        return accepted.contains(mime[..<slash] + "/*") || accepted.contains("*/*")
    }

    // MARK: - URLSessionDataDelegate

    open func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // Always allow: `.cancel` is ignored on Linux, so a rejected response is ended with `task.cancel()`.
        defer { completionHandler(.allow) }
        guard isCurrent(dataTask) else { return }
        var response = response
        var fromCache: CachedHTTPResponse?
        if let http = response as? HTTPURLResponse {
            // Cookies and the HTTP cache see the server's response, before any response modifier.
            switch httpTransaction.received(http) {
            case .proceed:
                break
            case .notModified:
                finish(error: ImageDownloaderError.notModified, cancelTask: true)
                return
            case .serveFromCache(let cached):  // [HTTP cache] a 304 refresh, or stale-if-error on a 5xx
                fromCache = cached
                response = cached.response
            case .refetch(let request):  // [HTTP cache] a 304 that matches no stored response: fetch anew
                refetch(request, replacing: dataTask)
                return
            }
            lock.withLock {
                serverResponse = http
                revalidated = fromCache
                if let fromCache {  // [HTTP cache]
                    measured.source = fromCache.source
                    measured.servedStale = fromCache.isStale
                }
            }
        }
        if let modifier = context.responseModifier {
            guard let modified = modifier.modifiedResponse(with: response) else {
                finish(error: ImageDownloaderError.invalidDownloadResponse, cancelTask: true)
                return
            }
            response = modified
        }
        let status = (response as? HTTPURLResponse)?.statusCode
        let hasCredential: Bool = lock.withLock {
            currentResponse = response
            buffer = Data()  // an authentication retry sends a second response
            lastReportedSize = -1
            measured.responseAt = Date()
            measured.statusCode = status
            measured.receivedBytes = 0
            measured.firstByteAt = nil
            awaitingAuthRetry = false
            return storedCredential != nil && authAttempts == 0
        }
        if let status {
            if status == 304 {
                finish(error: ImageDownloaderError.notModified, cancelTask: true)
                return
            }
            if !isAcceptable(status: status) {
                if status == 401, hasCredential, sameOrigin(response.url, originalRequest.url) {
                    // The challenge (and the retried request) follows this response on Linux.
                    lock.withLock { awaitingAuthRetry = true }
                    return
                }
                finish(error: ImageDownloaderError.invalidDownloadStatusCode(status), cancelTask: true)
                return
            }
        }
        if !isAcceptable(mimeType: response.mimeType) {
            finish(error: ImageDownloaderError.invalidDownloadContentType(response.mimeType), cancelTask: true)
            return
        }
        let announced = response.expectedContentLength
        let limit = context.maximumResponseSize ?? Int.max
        if announced > 0, announced > Int64(limit) {
            finish(error: ImageDownloaderError.responseTooLarge(Int(clamping: announced)), cancelTask: true)
            return
        }
        // gzip: the announced size is the compressed length or -1; progress clamps it to what arrived.
        let expected = announced > 0 ? Int(clamping: announced) : -1
        lock.withLock {
            // Room for the announced body up front (SDWebImage's initWithCapacity): the chunks are then copied
            // once each instead of being re-copied as the buffer grows. Capped, since the header may lie.
            if expected > 0, buffer.isEmpty { buffer = Data(capacity: min(expected, Self.maximumReservedBytes)) }
            expectedSize = expected
            measured.expectedBytes = expected
            lastReportedSize = 0
        }
        reportProgress(0, expected)
        post(.imageDownloadReceiveResponse)
    }

    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        enum Action { case drop, tooLarge(Int), accept(report: (Int, Int)?, progressive: ProgressiveDecoding?) }
        let limit = context.maximumResponseSize ?? Int.max
        let action: Action = lock.withLock {
            // Data keeps arriving after cancel() on Linux: drop it.
            guard phase == .running, task === dataTask, !awaitingAuthRetry else { return .drop }
            let (total, overflow) = buffer.count.addingReportingOverflow(data.count)
            if overflow || total > limit { return .tooLarge(overflow ? Int.max : total) }
            if buffer.isEmpty { measured.firstByteAt = Date() }
            buffer.append(data)
            measured.receivedBytes = total
            let expected = expectedSize > 0 ? max(expectedSize, total) : -1
            var report: (Int, Int)?
            let interval = storedMinimumProgressInterval
            if hasProgressHandlers, expected <= 0 || interval <= 0
                || Double(total - max(0, lastReportedSize)) / Double(expected) >= interval || total >= expected {
                lastReportedSize = total
                report = (total, expected)
            }
            return .accept(report: report, progressive: progressive)
        }
        switch action {
        case .drop:
            return
        case .tooLarge(let size):
            finish(error: ImageDownloaderError.responseTooLarge(size), cancelTask: true)
        case .accept(let report, let progressive):
            if let (received, expected) = report { reportProgress(received, expected) }
            progressive?.feed(data) { [weak self] image in self?.deliverPartial(image) }
        }
    }

    private func deliverPartial(_ image: DecodedImage) {
        guard lock.withLock({ phase == .running }) else { return }
        var image = image
        image.scale = decodingOptions().scaleFactor
        for record in callbacks.snapshot { record.deliverPartial(image) }
    }

    open func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard isCurrent(task) else { return }
        // [HTTP cache] stale-if-error: a failed transfer delivers the stale stored response instead.
        if let error, !lock.withLock({ cancelRequested }), let stale = httpTransaction.failed(error) {
            let hadResponse: Bool = lock.withLock {
                revalidated = stale
                currentResponse = stale.response
                measured.source = stale.source
                measured.servedStale = true
                measured.statusCode = stale.statusCode
                return measured.responseAt != nil
            }
            if !hadResponse { post(.imageDownloadReceiveResponse) }
        } else if let error {
            let failure: ImageDownloaderError
            if let urlError = error as? URLError {
                if urlError.code == .cancelled && lock.withLock({ cancelRequested }) {
                    failure = .cancelled
                } else if let unsupported = unsupportedInvalidCertificate(urlError) {
                    failure = unsupported
                } else {
                    failure = .network(urlError)
                }
            } else {
                failure = .network(URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error]))
            }
            finish(error: failure, cancelTask: false)
            return
        }
        let status = (response as? HTTPURLResponse)?.statusCode
        if let status, !isAcceptable(status: status) {
            // A 401 kept for an authentication retry that never came.
            finish(error: ImageDownloaderError.invalidDownloadStatusCode(status), cancelTask: false)
            return
        }
        // Nothing to decode, decrypt or store: answered from here, without a hop to a coder queue, and the
        // stop/finish notifications leave in the same callback-queue block as the answers.
        let nothingToDo = options.contains(.avoidDecodeImage) && context.decryptor == nil && !httpTransaction.mayStore
        let (data, progressive, report, toStore, inline):
            (Data, ProgressiveDecoding?, Bool, HTTPURLResponse?, Bool) = lock.withLock {
            // Decided once, here: `finish` posts the stop notification on the inline path.
            let inline = nothingToDo && self.progressive == nil
            if !inline { stopPosted = true }
            if let revalidated {
                // A 304 has no body: the download's bytes are the stored ones.
                buffer = revalidated.data
                measured.receivedBytes = buffer.count
            }
            let report = lastReportedSize != buffer.count || expectedSize != buffer.count
            lastReportedSize = buffer.count
            // The incremental decoder saw no bytes of a 304: the stored body is decoded in one shot.
            return (buffer, revalidated == nil ? self.progressive : nil, report, revalidated == nil ? serverResponse : nil,
                    inline)
        }
        if report { reportProgress(data.count, data.count) }
        if inline {
            decodeAndFinish(data, progressive: nil, alsoPosting: [.imageDownloadFinish])
            return
        }
        post(.imageDownloadStop, .imageDownloadFinish)
        let transaction = httpTransaction
        let work: @Sendable () -> Void = { [self] in
            // Stored as received (before any decryptor), whether or not it decodes, off the delegate queue.
            if let toStore { transaction.completed(toStore, data: data) }
            decodeAndFinish(data, progressive: progressive)
        }
        if options.contains(.avoidDecodeImage) {
            coderQueue.async(execute: work)
        } else {
            // Full-size bitmaps are what peak memory is made of: at most one final decode per core at a time.
            DecodeLimiter.shared.async(on: coderQueue, work)
        }
    }

    /// Linux cannot accept an invalid certificate per request (no server-trust challenge exists there): with
    /// `.allowInvalidSSLCertificates`, a TLS failure says so instead of looking like an ordinary network error.
    private func unsupportedInvalidCertificate(_ error: URLError) -> ImageDownloaderError? {
        #if canImport(FoundationNetworking)
        guard options.contains(.allowInvalidSSLCertificates), originalRequest.url?.scheme?.lowercased() == "https" else {
            return nil
        }
        let tlsCodes: Set<URLError.Code> = [
            .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
        ]
        let message = error.localizedDescription
        guard tlsCodes.contains(error.code) || message.contains("SSL") || message.contains("certificate") else { return nil }
        return .unsupportedOnPlatform(
            "allowInvalidSSLCertificates: URLSession on Linux cannot accept an invalid certificate (\(message))")
        #else
        return nil
        #endif
    }

    // MARK: - Decoding

    private func decodingOptions() -> ImageDecodingOptions {
        let key = originalRequest.url?.absoluteString ?? ""
        return ImageDecodingOptions(
            scaleFactor: context.imageScaleFactor ?? imageScaleFactor(forKey: key),
            thumbnailPixelSize: context.thumbnailPixelSize,
            scaleDownLimitBytes: options.contains(.scaleDownLargeImages) ? ImageDecodingOptions.defaultScaleDownLimitBytes : nil,
            decodeFirstFrameOnly: options.contains(.decodeFirstFrameOnly),
            maximumPixelCount: context.maximumPixelCount ?? ImageDecodingOptions.defaultMaximumPixelCount)
    }

    /// On the coder queue (or the delegate queue when there is nothing to decode): decryptor, then the
    /// incremental decoder's final image or a one-shot decode. `alsoPosting` goes to `finish`.
    private func decodeAndFinish(
        _ received: Data, progressive: ProgressiveDecoding?, alsoPosting notifications: [Notification.Name] = []
    ) {
        func finish(image: DecodedImage? = nil, data: Data? = nil, error: (any Error)?, cancelTask: Bool) {
            self.finish(image: image, data: data, error: error, cancelTask: cancelTask, alsoPosting: notifications)
        }
        guard lock.withLock({ phase == .running }) else { return }
        guard !received.isEmpty else {
            finish(error: ImageDownloaderError.badImageData("empty response body"), cancelTask: false)
            return
        }
        if httpTransaction.isCachedBody(received) {
            finish(error: ImageDownloaderError.cacheNotModified, cancelTask: false)
            return
        }
        var data = received
        if let decryptor = context.decryptor {
            guard let decrypted = decryptor.decryptedData(with: received, response: response), !decrypted.isEmpty else {
                finish(error: ImageDownloaderError.badImageData("the decryptor returned no data"), cancelTask: false)
                return
            }
            data = decrypted
        }
        if options.contains(.avoidDecodeImage) {
            finish(image: nil, data: data, error: nil, cancelTask: false)
            return
        }
        let decoded: Result<DecodedImage, any Error>
        if let result = progressive?.finish() {
            decoded = result
        } else {
            let manager = context.codersManager ?? .shared
            let options = decodingOptions()
            decoded = Result { try manager.decode(data, options: options) }
        }
        switch decoded {
        case .success(var image):
            guard image.width > 0, image.height > 0, !image.pixels.isEmpty else {
                finish(error: ImageDownloaderError.badImageData("image has zero pixels"), cancelTask: false)
                return
            }
            image.scale = decodingOptions().scaleFactor
            image.isIncomplete = false
            finish(image: image, data: data, error: nil, cancelTask: false)
        case .failure(let error):
            finish(error: ImageDownloaderError.badImageData(String(describing: error)), cancelTask: false)
        }
    }

    // MARK: - URLSessionTaskDelegate

    open func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
        if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
            handleServerTrust(challenge, completionHandler: completionHandler)
            return
        }
        #endif
        // Never `.performDefaultHandling` (it hangs forever on Linux) and never a nil credential (it crashes).
        let credential: URLCredential? = lock.withLock {
            guard challenge.previousFailureCount == 0, let storedCredential,
                  challenge.protectionSpace.host == originalRequest.url?.host else { return nil }
            #if canImport(FoundationNetworking)
            // corelibs Foundation answers a credential given after a redirect by restarting the ORIGINAL
            // request, which redirects again: 21 requests, then -1007. Report the 401 instead.
            guard measured.redirectCount == 0 else { return nil }
            #endif
            authAttempts += 1
            return storedCredential
        }
        if let credential {
            completionHandler(.useCredential, credential)
            return
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
        // The 401 already reached us: report it as the HTTP error it is.
        let status = (response as? HTTPURLResponse)?.statusCode ?? 401
        finish(error: ImageDownloaderError.invalidDownloadStatusCode(status), cancelTask: true)
    }

    #if canImport(Security)
    /// Apple platforms only: Linux has no server-trust challenge (an invalid certificate simply fails).
    private func handleServerTrust(
        _ challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if options.contains(.allowInvalidSSLCertificates), let trust = challenge.protectionSpace.serverTrust {
            completionHandler(.useCredential, URLCredential(trust: trust))
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }
    #endif

    open func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // After `task.cancel()` the completion handler must not run (corelibs traps); the cancel ends the task.
        let count: Int? = lock.withLock {
            guard !taskCancelIssued else { return nil }
            redirectPending = true
            measured.redirectCount += 1
            return measured.redirectCount
        }
        guard let count else { return }
        let decision = redirectDecision(for: request, response: response, count: count)
        completionHandler(decision)
        let deferred: URLSessionDataTask? = lock.withLock {
            redirectPending = false
            let taken = deferredCancel
            deferredCancel = nil
            if taken != nil { taskCancelIssued = true }
            return taken
        }
        // Queued after the completion handler's own work on the task's queue, so corelibs sees them in order.
        deferred?.cancel()
    }

    /// The request to follow, or nil (after finishing the operation with an error) when the redirect is refused:
    /// too many hops, or a scheme other than http(s) (never a local file, FTP, data: ...).
    private func redirectDecision(for request: URLRequest, response: HTTPURLResponse, count: Int) -> URLRequest? {
        if count > Self.maximumRedirects {
            finish(error: ImageDownloaderError.network(URLError(.httpTooManyRedirects)), cancelTask: true)
            return nil
        }
        let scheme = request.url?.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", request.url?.host?.isEmpty == false else {
            finish(error: ImageDownloaderError.network(URLError(.unsupportedURL)), cancelTask: true)
            return nil
        }
        var redirected = request
        let crossesOrigin = !sameOrigin(request.url, originalRequest.url)
        // Keep the downloader's headers (Accept, User-Agent, modifier headers), but never send the
        // Authorization header to another host.
        for (field, value) in originalRequest.allHTTPHeaderFields ?? [:]
        where redirected.value(forHTTPHeaderField: field) == nil {
            if crossesOrigin && field.caseInsensitiveCompare("Authorization") == .orderedSame { continue }
            redirected.setValue(value, forHTTPHeaderField: field)
        }
        if crossesOrigin { redirected.setValue(nil, forHTTPHeaderField: "Authorization") }
        // Cookies of the 3xx stored and the Cookie header rebuilt for the new URL; cache validators dropped.
        return httpTransaction.redirect(redirected, response: response)
    }
}

/// Same scheme, host and port: credentials may be sent.
func sameOrigin(_ a: URL?, _ b: URL?) -> Bool {
    guard let a, let b else { return false }
    func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) }
    return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && port(a) == port(b)
}

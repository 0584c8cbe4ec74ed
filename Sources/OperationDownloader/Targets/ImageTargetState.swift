import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one `setImage` call asked for.
enum ImageTargetSource {
    case url(URL?)
    case request(URLRequest)

    var url: URL? {
        switch self {
        case .url(let url): return url
        case .request(let request): return request.url
        }
    }
}

/// One `setImage` call's handlers.
struct ImageTargetCaller {
    let progress: ImageDownloaderProgressHandler?
    let completed: ImageTargetCompletedHandler?
}

/// A target's download (AFNetworking's active receipt). Its identity is the generation check: a downloader
/// callback acts on the target only while the state's `active` is this very object.
final class ImageTargetRequest: @unchecked Sendable {  // the owning ImageTargetState's `lock` guards every var
    let url: URL?
    let cacheIdentifier: String?
    /// The call that started it plus every same-URL call that joined it.
    var callers: [ImageTargetCaller]
    var token: ImageDownloadToken?
    /// True while `downloadImage` runs: an answer then is synchronous (memory-cache hit, invalid URL).
    var settingUp = true
    var synchronousAnswer: (image: DecodedImage?, data: Data?, error: (any Error)?)?
    /// Superseded, cancelled, or its target was released: every caller gets `.cancelled`, whatever the
    /// downloader answers.
    var cancelled = false

    init(url: URL?, cacheIdentifier: String?, caller: ImageTargetCaller) {
        self.url = url
        self.cacheIdentifier = cacheIdentifier
        self.callers = [caller]
    }
}

/// The per-target state that `ImageTarget` cannot store in the object itself: the target (weakly) and its
/// active request, both behind one lock per target.
///
/// `displayImage(_:)` is called with `lock` held, after checking that the request is still the active one, so
/// a late result can never overwrite a newer image or placeholder. The lock is recursive because user code
/// called under it (`displayImage`, the request modifier inside `downloadImage`) may set images on the same
/// target. Completion handlers always run without the lock.
final class ImageTargetState: @unchecked Sendable {  // `lock` guards `active` and its vars; `target` is set once
    let identifier: ObjectIdentifier
    private(set) weak var target: (any ImageTarget)?
    private let lock = NSRecursiveLock()
    private var active: ImageTargetRequest?

    init(target: any ImageTarget) {
        self.identifier = ObjectIdentifier(target)
        self.target = target
    }

    /// The URL in flight, if any.
    var activeURL: URL? {
        lock.lock()
        defer { lock.unlock() }
        return active?.url
    }

    var hasActiveRequest: Bool {
        lock.lock()
        defer { lock.unlock() }
        return active != nil
    }

    // MARK: - Starting

    func load(
        _ source: ImageTargetSource, placeholder: DecodedImage?, options: ImageDownloaderOptions,
        context: ImageDownloaderContext?, downloader: ImageDownloader,
        progress: ImageDownloaderProgressHandler?, completed: ImageTargetCompletedHandler?
    ) {
        var options = options
        options.remove(.avoidDecodeImage)
        var context = context ?? ImageDownloaderContext()
        let caller = ImageTargetCaller(progress: progress, completed: completed)
        let url = source.url

        lock.lock()
        if let current = active, Self.sameImage(current, url: url, cacheIdentifier: context.cacheIdentifier) {
            // Same URL already loading for this target: join it instead of requesting it again.
            current.callers.append(caller)
            lock.unlock()
            return
        }
        let supersededToken = takeActive()
        if context.callbackQueue == nil { context.callbackQueue = target?.imageDeliveryQueue }
        let request = ImageTargetRequest(url: url, cacheIdentifier: context.cacheIdentifier, caller: caller)
        active = request

        let progressHandler: ImageDownloaderProgressHandler = { [self] received, expected, url in
            reportProgress(request, received: received, expected: expected, url: url)
        }
        let completedHandler: ImageDownloaderCompletedHandler = { [self] image, data, error, finished in
            if finished {
                finish(request, image: image, data: data, error: error)
            } else if let image {
                showPartial(request, image)
            }
        }
        let token: ImageDownloadToken?
        switch source {
        case .url(let url):
            token = downloader.downloadImage(
                url, options: options, context: context, progress: progressHandler, completed: completedHandler)
        case .request(let urlRequest):
            token = downloader.downloadImage(
                with: urlRequest, options: options, context: context, progress: progressHandler,
                completed: completedHandler)
        }

        request.settingUp = false
        let isCurrent = active === request
        let answer = request.synchronousAnswer
        var orphanedToken: ImageDownloadToken?
        if let answer {
            if isCurrent {
                active = nil
                if answer.error == nil, let image = answer.image {
                    target?.displayImage(image)
                } else {
                    target?.displayImage(placeholder)
                }
            }
        } else if isCurrent {
            request.token = token
            target?.displayImage(placeholder)
        } else {
            // Superseded from user code that ran inside `downloadImage`, before the token existed.
            orphanedToken = token
        }
        lock.unlock()

        supersededToken?.cancel()
        orphanedToken?.cancel()
        if let answer {
            deliver(request, image: answer.image, data: answer.data, error: answer.error, source: .memoryCache)
        }
    }

    /// AFNetworking compares the URL only; the cache identifier also matters here, since it selects a
    /// different image (for example another thumbnail size) of the same URL.
    private static func sameImage(_ request: ImageTargetRequest, url: URL?, cacheIdentifier: String?) -> Bool {
        guard let url, let activeURL = request.url else { return false }
        return activeURL.absoluteString == url.absoluteString && request.cacheIdentifier == cacheIdentifier
    }

    // MARK: - Cancelling

    /// Cancels the active request: its callers get `.cancelled` when the downloader answers the token.
    func cancel() {
        lock.lock()
        let token = takeActive()
        lock.unlock()
        token?.cancel()
    }

    /// Cancels the active request if the target has been released (nobody is left to show the image).
    func cancelIfTargetReleased() {
        lock.lock()
        let token = target == nil ? takeActive() : nil
        lock.unlock()
        token?.cancel()
    }

    /// Under `lock`: retires the active request and returns its token for cancelling outside the lock.
    private func takeActive() -> ImageDownloadToken? {
        guard let request = active else { return nil }
        active = nil
        request.cancelled = true
        let token = request.token
        request.token = nil
        return token
    }

    // MARK: - Downloader callbacks (on the delivery queue)

    private func reportProgress(_ request: ImageTargetRequest, received: Int, expected: Int, url: URL?) {
        lock.lock()
        let isCurrent = active === request
        let released = target == nil
        let token = isCurrent && released ? takeActive() : nil
        let handlers = isCurrent && !released ? request.callers.compactMap(\.progress) : []
        lock.unlock()
        if let token {
            token.cancel()
            ImageTargetRegistry.shared.forget(self)
            return
        }
        for handler in handlers { handler(received, expected, url) }
    }

    private func showPartial(_ request: ImageTargetRequest, _ image: DecodedImage) {
        lock.lock()
        defer { lock.unlock() }
        guard active === request, let target else { return }
        target.displayImage(image)
    }

    private func finish(_ request: ImageTargetRequest, image: DecodedImage?, data: Data?, error: (any Error)?) {
        lock.lock()
        if request.settingUp {
            // Answered inside `downloadImage`: `load` shows it and delivers it after its own bookkeeping.
            request.synchronousAnswer = (image, data, error)
            lock.unlock()
            return
        }
        let token = request.token
        if active === request {
            active = nil
            request.token = nil
            if error == nil, let image { target?.displayImage(image) }
        }
        let released = target == nil
        lock.unlock()
        deliver(
            request, image: image, data: data, error: error, source: .network,
            response: token?.response as? HTTPURLResponse, metrics: token?.metrics)
        if released { ImageTargetRegistry.shared.forget(self) }
    }

    /// Answers every caller of `request` once, without the lock.
    private func deliver(
        _ request: ImageTargetRequest, image: DecodedImage?, data: Data?, error: (any Error)?,
        source: ImageTargetResult.Source, response: HTTPURLResponse? = nil, metrics: ImageDownloadMetrics? = nil
    ) {
        lock.lock()
        let callers = request.callers
        request.callers = []
        let cancelled = request.cancelled
        lock.unlock()

        let result: Result<ImageTargetResult, any Error>
        if cancelled {
            result = .failure(ImageDownloaderError.cancelled)
        } else if let error {
            result = .failure(error)
        } else if let image {
            result = .success(
                ImageTargetResult(
                    image: image, data: data, url: request.url, source: source, response: response, metrics: metrics))
        } else {
            result = .failure(ImageDownloaderError.badImageData(.noImage))
        }
        for caller in callers { caller.completed?(result) }
    }
}

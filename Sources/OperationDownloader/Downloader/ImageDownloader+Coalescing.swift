import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Callers joining the operation in flight for their URL, or publishing a new one (Docs/Downloader.md).
extension ImageDownloader {
    /// An operation in flight for a coalescing key.
    struct InFlight {
        let operation: any ImageDownloaderOperationProtocol
        /// The memory-cache writes done for this operation's callers, when the completion wrappers do them
        /// (operation classes that are not this package's; nil otherwise).
        let cacheWrites: CacheWrites?

        /// Finished or cancelled: never joined again. (User code for custom classes: never under the lock.)
        var isClosed: Bool { operation.isFinished || operation.isCancelled }
    }

    /// `plain`: the request is `URLRequest(url:)` made by the URL entry point, so the request to send can be
    /// built afresh instead of copied and mutated (see `prepareRequest`).
    ///
    /// No lock is held while user code runs (the request modifier, a custom operation class's initialiser,
    /// `addHandlers` and properties, `OperationQueue.addOperation`): the lock only guards the map of
    /// operations in flight, and an operation is published there only once its first caller is added.
    func download(
        _ request: URLRequest, plain: Bool, options: ImageDownloaderOptions, context: ImageDownloaderContext?,
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?
    ) -> ImageDownloadToken? {
        guard let url = request.url, Self.isSupported(url) else {
            completed?(nil, nil, ImageDownloaderError.invalidURL, true)
            return nil
        }
        var resolved = context ?? ImageDownloaderContext()
        resolvePerCallerSettings(&resolved)
        let variant = ImageVariant(options: options, context: resolved)
        // Computed once: the operation takes it from here instead of deriving it again from the context.
        resolved.variant = variant
        let identifier = resolved.cacheIdentifier
        // The Optional `addHandlers` takes, made once for every round below.
        let caller: ImageDownloaderContext? = resolved
        let cacheIdentifier = variant.additionalIdentifier(cacheIdentifier: identifier)
        if Self.allowsCachedData(request.cachePolicy), let cache = storedConfiguration.imageCache,
           let image = cache.image(for: request, withAdditionalIdentifier: cacheIdentifier) {
            completed?(image, nil, nil, true)
            return nil
        }
        if let reason = transport.unsupportedReason(for: url) {
            // A host the transport cannot reach here: never queued, no progress call.
            completed?(nil, nil, ImageDownloaderError.unsupportedOnPlatform(reason), true)
            return nil
        }
        let key = CoalescingKey.make(
            url: url, identifier: identifier, options: options, cachePolicy: request.cachePolicy, variant: variant,
            separatesVariants: !operationWritesMemoryCache)
        let answer = wrap(completed, request: request, identifier: cacheIdentifier)
        func add(to operation: any ImageDownloaderOperationProtocol, _ writes: CacheWrites?) -> AnyObject? {
            operation.addHandlers(forProgress: progress, completed: answer(writes), options: options, context: caller)
        }

        var made: (operation: any ImageDownloaderOperationProtocol, request: URLRequest)?
        // A few rounds at most: each one either joins the operation in flight, or publishes its own; a round is
        // lost only to a concurrent caller that published first (or to an operation closing as we join it).
        for _ in 0..<8 {
            if let (entry, callerToken) = joinInFlight(key: key, adding: add) {
                let wanted = Self.priority(for: options)
                if wanted.rawValue > entry.operation.queuePriority.rawValue { entry.operation.queuePriority = wanted }
                return ImageDownloadToken(
                    url: url, request: entry.operation.request, operation: entry.operation, callerToken: callerToken,
                    coalescingKey: key, downloader: self)
            }
            if lock.withLock({ invalidated }) { break }
            if made == nil {
                // User code (the request modifier) runs outside the lock.
                let prepared = prepareRequest(request, plain: plain, options: options, context: resolved)
                guard let (prepared, modified) = prepared else { break }
                if modified, let refusal = refusal(for: prepared) {
                    // The modifier's request cannot be loaded. Never queued: no progress call, no operation.
                    completed?(nil, nil, refusal, true)
                    return nil
                }
                // A modifier that changed the timeout sets this download's idle timeout (as on SDWebImage, whose
                // session uses the request's).
                let idle = DownloadSettings.idleTimeout(resolved.downloadTimeout ?? storedConfiguration.downloadTimeout)
                if modified, prepared.timeoutInterval != idle { resolved.downloadTimeout = prepared.timeoutInterval }
                let operation = makeOperation(
                    request: prepared, cacheRequest: request, options: options, context: resolved)
                made = (operation, prepared)
            }
            guard let (operation, prepared) = made else { break }
            let writes = operationWritesMemoryCache ? nil : CacheWrites()
            // Our caller first: nobody else can reach the operation yet, so it cannot have closed.
            guard let callerToken = add(to: operation, writes) else { break }
            let published: Bool? = lock.withLock {
                if invalidated { return nil }
                if operations[key] != nil { return false }
                operations[key] = InFlight(operation: operation, cacheWrites: writes)
                liveOperations += 1
                return true
            }
            guard let published else { break }
            guard published else {
                // Another caller of the key published first: join it (this operation is dropped unstarted, and
                // its caller record with it, never answered).
                made = nil
                continue
            }
            enqueue(operation, key: key)
            return ImageDownloadToken(
                url: url, request: prepared, operation: operation, callerToken: callerToken, coalescingKey: key,
                downloader: self)
        }
        completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
        return nil
    }

    /// The caller's context with the downloader's defaults for what is decided per caller (the operation's own
    /// context is the first caller's, so a later caller must not inherit that caller's choices).
    private func resolvePerCallerSettings(_ context: inout ImageDownloaderContext) {
        if context.callbackQueue == nil { context.callbackQueue = callbackQueue }
        if context.allowsIncompleteImages == nil { context.allowsIncompleteImages = storedConfiguration.allowsIncompleteImages }
        if context.maximumPixelCount == nil { context.maximumPixelCount = storedConfiguration.maximumPixelCount }
    }

    /// Why the prepared request (after the request modifier) cannot be loaded at all: no URL, a scheme the
    /// transport cannot load (`.invalidURL`), or a host it cannot reach here (`.unsupportedOnPlatform`).
    private func refusal(for request: URLRequest) -> ImageDownloaderError? {
        guard let url = request.url, Self.isSupported(url) else { return .invalidURL }
        return transport.unsupportedReason(for: url).map { .unsupportedOnPlatform($0) }
    }

    /// Completions as the operation gets them. This package's operation writes the memory cache itself, before
    /// answering; for other operation classes the wrapper adds the caller's image (under its variant) once
    /// per operation and variant, before the caller runs.
    private func wrap(
        _ completed: ImageDownloaderCompletedHandler?, request: URLRequest, identifier: String?
    ) -> (CacheWrites?) -> ImageDownloaderCompletedHandler? {
        guard !operationWritesMemoryCache, let cache = storedConfiguration.imageCache else { return { _ in completed } }
        return { writes in
            { image, data, error, finished in
                if finished, error == nil, let image, !image.isIncomplete, writes?.claim(identifier ?? "") == true,
                   cache.shouldCache(image, for: request, withAdditionalIdentifier: identifier) {
                    cache.add(image, for: request, withAdditionalIdentifier: identifier)
                }
                completed?(image, data, error, finished)
            }
        }
    }

    /// Adds a caller to the operation in flight for `key`, if there is one that still takes callers. The lock
    /// is held only to read (or clean) the map.
    private func joinInFlight(
        key: String, adding add: (any ImageDownloaderOperationProtocol, CacheWrites?) -> AnyObject?
    ) -> (InFlight, AnyObject)? {
        guard let entry = lock.withLock({ operations[key] }) else { return nil }
        guard !entry.isClosed, let callerToken = add(entry.operation, entry.cacheWrites) else {
            // It no longer takes callers: forget it, so the next round publishes a fresh operation.
            lock.withLock { if operations[key]?.operation === entry.operation { operations[key] = nil } }
            return nil
        }
        return (entry, callerToken)
    }

    /// Cancels one caller (called by its token).
    func cancel(_ token: ImageDownloadToken) {
        let operation = token.operation
        // The operation removes the caller and, if it was the last, closes itself to new callers in one
        // critical section: a concurrent `downloadImage` then creates a fresh operation.
        let wasLast = operation.cancel(token.callerToken)
        guard wasLast else { return }
        lock.withLock {
            if operations[token.coalescingKey]?.operation === operation { operations[token.coalescingKey] = nil }
        }
    }
}

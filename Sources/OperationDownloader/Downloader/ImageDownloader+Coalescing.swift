import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Callers joining the operation in flight for their URL, or publishing a new one (Docs/Downloader.md).
extension ImageDownloader {
    /// `plain`: the request is `URLRequest(url:)` made by the URL entry point, so the request to send can be
    /// built afresh instead of copied and mutated (see `prepareRequest`).
    ///
    /// No lock is held while user code runs (the request modifier, a custom operation class's initialiser,
    /// `addHandlers` and properties, `OperationQueue.addOperation`): the lock only guards the map of
    /// operations in flight, and an operation is published there only once its first caller is added.
    /// Operations of every class are reached through their `DownloadOperationHandle`.
    func download(
        _ request: URLRequest, plain: Bool, options: ImageDownloaderOptions, context: ImageDownloaderContext?,
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?
    ) -> ImageDownloadToken? {
        guard let url = request.url, Self.isSupported(url) else {
            completed?(nil, nil, ImageDownloaderError.invalidURL, true)
            return nil
        }
        // This caller's settings, resolved once (ResolvedOptions.swift): its queue, variant and cache entry.
        let caller = CallerOptions(
            options: options, context: context ?? .empty, defaults: callerDefaults)
        if Self.allowsCachedData(request.cachePolicy), let cache = storedConfiguration.imageCache,
           let image = cache.image(for: request, withAdditionalIdentifier: caller.memoryCacheIdentifier) {
            resources.telemetry?.memoryCacheHit()
            completed?(image, nil, nil, true)
            return nil
        }
        if let reason = transport.unsupportedReason(for: url) {
            // A host the transport cannot reach here: never queued, no progress call.
            completed?(nil, nil, ImageDownloaderError.unsupportedOnPlatform(reason), true)
            return nil
        }
        let key = CoalescingKey.make(
            url: url, identifier: caller.cacheIdentifier, options: options, cachePolicy: request.cachePolicy,
            variant: caller.variant, separatesVariants: operationMaker.separatesVariants, context: context)
        func add(to handle: any DownloadOperationHandle) -> AnyObject? {
            handle.addCaller(progress: progress, completed: completed, options: options, caller: caller, context: context)
        }

        var made: (handle: any DownloadOperationHandle, request: URLRequest)?
        // A few rounds at most: each one either joins the operation in flight, or publishes its own; a round is
        // lost only to a concurrent caller that published first, or to an operation that refused the caller
        // (it closed as we joined: finished, cancelled, last caller gone, or a custom class saying no).
        for _ in 0..<8 {
            if let (handle, callerToken) = joinInFlight(key: key, adding: add) {
                handle.raisePriority(to: Self.priority(for: options))
                if let telemetry = resources.telemetry {  // [Observability] the join, and its trace linked
                    telemetry.callerJoined()
                    handle.observation?.callerJoined(trace: context?.traceParent, traceState: context?.traceState)
                }
                return ImageDownloadToken(
                    url: url, request: handle.operation.request, handle: handle, callerToken: callerToken,
                    coalescingKey: key, downloader: self)
            }
            if lock.withLock({ invalidated }) { break }
            if made == nil {
                // User code (the request modifier) runs outside the lock.
                let idle = DownloadDefaults.idleTimeout(context?.downloadTimeout ?? storedConfiguration.downloadTimeout)
                let prepared = prepareRequest(request, plain: plain, options: options, idleTimeout: idle, context: context)
                guard let (prepared, modified) = prepared else { break }
                if modified, let refusal = refusal(for: prepared) {
                    // The modifier's request cannot be loaded. Never queued: no progress call, no operation.
                    completed?(nil, nil, refusal, true)
                    return nil
                }
                // A modifier that changed the timeout sets this download's idle timeout (as on SDWebImage, whose
                // session uses the request's).
                let timeoutOverride = modified && prepared.timeoutInterval != idle ? prepared.timeoutInterval : nil
                let handle = makeOperation(
                    request: prepared, cacheRequest: request, options: options, context: context,
                    downloadTimeout: timeoutOverride, madeFromURL: plain && !modified)
                made = (handle, prepared)
            }
            guard let (handle, prepared) = made else { break }
            // Our caller first: nobody else can reach the operation yet, so only a custom class can refuse it.
            guard let callerToken = add(to: handle) else { break }
            let published: Bool? = lock.withLock {
                if invalidated { return nil }
                if operations[key] != nil { return false }
                operations[key] = handle
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
            enqueue(handle, key: key)
            return ImageDownloadToken(
                url: url, request: prepared, handle: handle, callerToken: callerToken, coalescingKey: key,
                downloader: self)
        }
        completed?(nil, nil, ImageDownloaderError.invalidDownloadOperation, true)
        return nil
    }

    /// What this downloader's callers get where their context says nothing (ResolvedOptions.swift).
    var callerDefaults: CallerDefaults { storedConfiguration.callerDefaults(callbackQueue: callbackQueue) }

    /// Why the prepared request (after the request modifier) cannot be loaded at all: no URL, a scheme the
    /// transport cannot load (`.invalidURL`), or a host it cannot reach here (`.unsupportedOnPlatform`).
    private func refusal(for request: URLRequest) -> ImageDownloaderError? {
        guard let url = request.url, Self.isSupported(url) else { return .invalidURL }
        return transport.unsupportedReason(for: url).map { .unsupportedOnPlatform($0) }
    }

    /// Adds a caller to the operation in flight for `key`, if there is one that still takes callers. The lock
    /// is held only to read (or clean) the map.
    private func joinInFlight(
        key: CoalescingKey, adding add: (any DownloadOperationHandle) -> AnyObject?
    ) -> (any DownloadOperationHandle, AnyObject)? {
        guard let handle = lock.withLock({ operations[key] }) else { return nil }
        guard !handle.isClosed, let callerToken = add(handle) else {
            // It no longer takes callers: forget it, so the next round publishes a fresh operation.
            lock.withLock { if operations[key] === handle { operations[key] = nil } }
            return nil
        }
        return (handle, callerToken)
    }

    /// Cancels one caller (called by its token).
    func cancel(_ token: ImageDownloadToken) {
        let handle = token.handle
        // The operation removes the caller and, if it was the last, closes itself to new callers in one
        // critical section: a concurrent `downloadImage` then creates a fresh operation.
        guard handle.cancelCaller(token.callerToken) else { return }
        lock.withLock {
            if operations[token.coalescingKey] === handle { operations[token.coalescingKey] = nil }
        }
    }
}

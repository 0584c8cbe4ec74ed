import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An operation of a class other than `ImageDownloaderOperation` (`ImageDownloaderConfiguration.operationClass`
/// conforming to `ImageDownloaderOperationProtocol` alone), wrapped once when the downloader makes it, so the
/// downloader treats it like its own (DownloadOperationHandle). What such a class cannot do for itself is done
/// here:
/// - the memory cache: each caller's completion is wrapped to write its complete image first, through the
///   download's one `MemoryCacheWriter` (once per variant);
/// - URLSession routing: the class creates its own task on the session it was given, so the router learns the
///   operation and finds it by `dataTask` on the first callback of an unknown task, until it finishes.
final class ForeignOperation: DownloadOperationHandle {
    let operation: any ImageDownloaderOperationProtocol
    private let memoryCache: MemoryCacheWriter?
    /// The memory-cache identifiers written so far: the class answers its callers one by one, on any thread,
    /// and each variant is written once (a handful at most, so an array).
    private let written = Locked<[String]>([])

    init(_ operation: any ImageDownloaderOperationProtocol, memoryCache: MemoryCacheWriter?) {
        self.operation = operation
        self.memoryCache = memoryCache
    }

    func addCaller(
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?,
        options: ImageDownloaderOptions, caller: CallerOptions, context: ImageDownloaderContext?
    ) -> AnyObject? {
        var answer = completed
        if let memoryCache {
            let identifier = caller.memoryCacheIdentifier
            let written = self.written
            answer = { image, data, error, finished in
                if finished, error == nil, let image, !image.isIncomplete {
                    let first = written.withLock { written in
                        if written.contains(identifier ?? "") { return false }
                        written.append(identifier ?? "")
                        return true
                    }
                    if first { memoryCache.write(image, identifier: identifier) }
                }
                completed?(image, data, error, finished)
            }
        }
        return operation.addHandlers(
            forProgress: progress, completed: answer, options: options, context: caller.filling(context))
    }

    func cancelCaller(_ token: AnyObject) -> Bool { operation.cancel(token) }

    var isClosed: Bool { operation.isFinished || operation.isCancelled }

    func prepareToRun(
        router: SessionRouter?, whenFinished body: @escaping @Sendable (any ImageDownloaderOperationProtocol) -> Void
    ) {
        router?.register(operation)
        // Weak: the hook is stored in the operation (its `completionBlock` by default), which may never drop it.
        operation.onFinishing { [weak operation, weak router] in
            guard let operation else { return }
            router?.unregister(operation)
            body(operation)
        }
    }
}

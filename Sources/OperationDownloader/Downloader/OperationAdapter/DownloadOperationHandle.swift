import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one interface the downloader talks to about an operation it made (Docs/Architecture.md, "The downloader
/// and its operations"): callers joining and leaving, the queue, the end, the memory cache, and the routing of
/// URLSession callbacks.
///
/// This package's `ImageDownloaderOperation` (and its subclasses) conforms natively, at no cost; an operation
/// of any other `ImageDownloaderOperationProtocol` class is wrapped once, when it is made (ForeignOperation.swift).
/// `OperationMaker` decides which, once per downloader: nothing else in the downloader asks an operation's class.
protocol DownloadOperationHandle: AnyObject, Sendable {
    /// The `Operation` the queue runs, callers' tokens expose, and notifications carry.
    var operation: any ImageDownloaderOperationProtocol { get }

    /// Adds a caller with its options, its resolved settings (`caller`, ResolvedOptions.swift) and its own
    /// `context` (for a class that reads contexts, filled with `caller`'s settings): its cancel token, or nil when
    /// the operation no longer takes callers (finished, cancelled, its last caller left, or a custom class
    /// refusing): the downloader then publishes a new operation. The caller's complete image is memory-cached
    /// before it runs.
    func addCaller(
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?,
        options: ImageDownloaderOptions, caller: CallerOptions, context: ImageDownloaderContext?
    ) -> AnyObject?

    /// Removes one caller (it gets `.cancelled` once). Returns whether it was the last, which cancelled the
    /// operation.
    func cancelCaller(_ token: AnyObject) -> Bool

    /// Finished or cancelled: never joined again. (User code for custom classes: never under a lock.)
    var isClosed: Bool { get }

    /// What the operation reports (Observability/): this package's operation's, nil for other classes.
    var observation: DownloadObservation? { get }

    /// Called once, before the queue gets the operation: `body` runs once when it finishes (the downloader's
    /// bookkeeping), handed the operation, so that it need not capture it (the hook is stored in the operation,
    /// and a weak capture would give the operation a side table: Docs/Transports.md), and until then `router`
    /// (URLSession's) routes the callbacks of tasks the operation creates itself to it.
    func prepareToRun(
        router: SessionRouter?, whenFinished body: @escaping @Sendable (any ImageDownloaderOperationProtocol) -> Void)
}

extension DownloadOperationHandle {
    var observation: DownloadObservation? { nil }

    /// Raises the operation's queue priority (and its transfer's) to `priority` when that is higher: a caller
    /// that wants the image sooner joined.
    func raisePriority(to priority: Operation.QueuePriority) {
        let operation = self.operation
        if priority.rawValue > operation.queuePriority.rawValue { operation.queuePriority = priority }
    }
}

/// This package's operation is its own handle: it caches, routes and answers itself.
extension ImageDownloaderOperation: DownloadOperationHandle {
    var operation: any ImageDownloaderOperationProtocol { self }

    /// This class itself takes the settings as the downloader resolved them; a subclass gets them through its
    /// `addHandlers(forProgress:completed:options:context:)`, which it may override.
    func addCaller(
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?,
        options: ImageDownloaderOptions, caller: CallerOptions, context: ImageDownloaderContext?
    ) -> AnyObject? {
        guard type(of: self) == ImageDownloaderOperation.self else {
            return addHandlers(
                forProgress: progress, completed: completed, options: options, context: caller.filling(context))
        }
        return addCaller(progress: progress, completed: completed, caller: caller)
    }

    func cancelCaller(_ token: AnyObject) -> Bool { cancel(token) }

    var isClosed: Bool { isFinished || isCancelled }

    /// Its transfers bind their tasks through the transport (URLSessionTransfer), so the router needs nothing.
    func prepareToRun(
        router: SessionRouter?, whenFinished body: @escaping @Sendable (any ImageDownloaderOperationProtocol) -> Void
    ) {
        // Unowned: the hook runs in `setFinished`, on this operation, and is dropped there.
        onFinishing { [unowned self] in body(self) }
    }
}

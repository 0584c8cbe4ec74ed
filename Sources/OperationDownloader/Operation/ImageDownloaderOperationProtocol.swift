import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `ImageDownloader` needs from an operation; implement it (usually by subclassing
/// `ImageDownloaderOperation`) and set `ImageDownloaderConfiguration.operationClass` to customise downloads.
///
/// With URLSession, the downloader routes its session's delegate callbacks to the operation whose `dataTask`
/// they concern.
public protocol ImageDownloaderOperationProtocol: Operation, URLSessionDataDelegate {
    /// `session` is the downloader's session to create the task on; `nil` means the operation owns one.
    /// `context` carries the downloader's settings (modifiers, limits, queues, transport) merged with the
    /// first caller's.
    init(request: URLRequest, session: URLSession?, options: ImageDownloaderOptions, context: ImageDownloaderContext?)

    /// Adds a caller. Returns the caller's cancel token, or `nil` when the operation no longer accepts
    /// callers (finished, cancelled, or its last caller left): then the downloader creates a new operation.
    func addHandlers(forProgress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?) -> AnyObject?

    /// Adds a caller with its own options and context (its callback queue, and its variant of the image:
    /// thumbnail size, scale, transformer... Docs/Options.md). The downloader adds every caller this way.
    /// Default: `addHandlers(forProgress:completed:)` (the caller gets the operation's own settings).
    func addHandlers(
        forProgress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?,
        options: ImageDownloaderOptions, context: ImageDownloaderContext?
    ) -> AnyObject?

    /// Runs `body` once when the operation finishes (the downloader's bookkeeping).
    /// Default: `body` becomes the `completionBlock`.
    func onFinishing(_ body: @escaping @Sendable () -> Void)

    /// Removes one caller (it receives `.cancelled` once); the last caller cancels the operation.
    /// Returns whether the operation was cancelled.
    @discardableResult func cancel(_ token: AnyObject?) -> Bool

    var request: URLRequest? { get }
    var response: URLResponse? { get }
    var dataTask: URLSessionTask? { get }
    var credential: URLCredential? { get set }
    var minimumProgressInterval: Double { get set }
    var acceptableStatusCodes: IndexSet? { get set }
    var acceptableContentTypes: Set<String>? { get set }
    var metrics: ImageDownloadMetrics? { get }
}

extension ImageDownloaderOperationProtocol {
    public func addHandlers(
        forProgress progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?,
        options: ImageDownloaderOptions, context: ImageDownloaderContext?
    ) -> AnyObject? {
        addHandlers(forProgress: progress, completed: completed)
    }

    public func onFinishing(_ body: @escaping @Sendable () -> Void) {
        completionBlock = body
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of a downloader's one session: forwards each task's callbacks to the operation that owns
/// the task.
///
/// Operations create their tasks themselves (custom operation classes included), so the router learns the
/// task of an operation lazily: on the first callback for an unknown task it looks through the operations
/// registered with it and remembers the match. A separate object (not the downloader) so the session, which
/// retains its delegate until invalidated, does not keep the downloader alive.
final class SessionRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `lock` guards both maps
    private let lock = NSLock()
    private var unmatched: [ObjectIdentifier: any ImageDownloaderOperationProtocol] = [:]
    private var byTask: [Int: any ImageDownloaderOperationProtocol] = [:]

    /// Routes callbacks to `operation` once it has created its task.
    func register(_ operation: any ImageDownloaderOperationProtocol) {
        lock.withLock { unmatched[ObjectIdentifier(operation)] = operation }
    }

    /// Forgets `operation` (it finished).
    func unregister(_ operation: any ImageDownloaderOperationProtocol) {
        lock.withLock {
            unmatched[ObjectIdentifier(operation)] = nil
            if let id = byTask.first(where: { $0.value === operation })?.key { byTask[id] = nil }
        }
    }

    /// Routes `task` to `operation` at once (our own operations report their task before resuming it,
    /// which spares the lookup through unmatched operations).
    func bind(_ task: URLSessionTask, to operation: any ImageDownloaderOperationProtocol) {
        lock.withLock {
            unmatched[ObjectIdentifier(operation)] = nil
            byTask[task.taskIdentifier] = operation
        }
    }

    private func operation(for task: URLSessionTask) -> (any ImageDownloaderOperationProtocol)? {
        lock.withLock {
            if let found = byTask[task.taskIdentifier] { return found }
            guard let (key, found) = unmatched.first(where: { $0.value.dataTask === task }) else { return nil }
            unmatched[key] = nil
            byTask[task.taskIdentifier] = found
            return found
        }
    }

    private func forget(_ task: URLSessionTask) {
        lock.withLock { byTask[task.taskIdentifier] = nil }
    }

    // MARK: - Forwarding

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let operation = operation(for: dataTask) else {
            // A task nobody owns any more (its operation finished): stop it.
            dataTask.cancel()
            completionHandler(.allow)
            return
        }
        #if canImport(FoundationNetworking)
        operation.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
        #else
        if let forward = operation.urlSession(_:dataTask:didReceive:completionHandler:) {
            forward(session, dataTask, response, completionHandler)
        } else {
            completionHandler(.allow)
        }
        #endif
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let operation = operation(for: dataTask) else { return }
        #if canImport(FoundationNetworking)
        operation.urlSession(session, dataTask: dataTask, didReceive: data)
        #else
        operation.urlSession?(session, dataTask: dataTask, didReceive: data)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let operation = operation(for: task) else { return }
        forget(task)
        #if canImport(FoundationNetworking)
        operation.urlSession(session, task: task, didCompleteWithError: error)
        #else
        operation.urlSession?(session, task: task, didCompleteWithError: error)
        #endif
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        // No owner: refuse (default handling hangs on Linux).
        guard let operation = operation(for: task) else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        #if canImport(FoundationNetworking)
        operation.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        #else
        if let forward = operation.urlSession(_:task:didReceive:completionHandler:) {
            forward(session, task, challenge, completionHandler)
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
        #endif
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let operation = operation(for: task) else {
            completionHandler(nil)
            return
        }
        #if canImport(FoundationNetworking)
        operation.urlSession(
            session, task: task, willPerformHTTPRedirection: response, newRequest: request,
            completionHandler: completionHandler)
        #else
        if let forward = operation.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:) {
            forward(session, task, response, request, completionHandler)
        } else {
            completionHandler(request)
        }
        #endif
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of a URLSession transport's one session: forwards each task's callbacks to the delegate that
/// owns the task.
///
/// A transfer binds its task before resuming it: to the operation when it has one (its overridable
/// `URLSessionDataDelegate` methods hand the events back to the transfer), else to the transfer itself.
/// Custom operation classes that create their own tasks on the session are registered instead, and found
/// on the first callback of an unknown task by their `dataTask`. A separate object (not the downloader) so
/// the session, which retains its delegate until invalidated, does not keep the downloader alive.
final class SessionRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `lock` guards both maps
    private let lock = NSLock()
    private var unmatched: [ObjectIdentifier: any ImageDownloaderOperationProtocol] = [:]
    private var byTask: [Int: any URLSessionDataDelegate] = [:]

    /// Routes the callbacks of the tasks `operation` creates itself (found by its `dataTask`).
    func register(_ operation: any ImageDownloaderOperationProtocol) {
        lock.withLock { unmatched[ObjectIdentifier(operation)] = operation }
    }

    /// Forgets `operation` (it finished).
    func unregister(_ operation: any ImageDownloaderOperationProtocol) {
        lock.withLock {
            if unmatched.removeValue(forKey: ObjectIdentifier(operation)) == nil,
               let id = byTask.first(where: { $0.value === operation })?.key {
                byTask[id] = nil
            }
        }
    }

    /// Routes `task` to `delegate` (a transfer binds its task before resuming it).
    func bind(_ task: URLSessionTask, to delegate: any URLSessionDataDelegate) {
        lock.withLock {
            if let operation = delegate as? any ImageDownloaderOperationProtocol {
                unmatched[ObjectIdentifier(operation)] = nil
            }
            byTask[task.taskIdentifier] = delegate
        }
    }

    private func delegate(for task: URLSessionTask) -> (any URLSessionDataDelegate)? {
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
        guard let delegate = delegate(for: dataTask) else {
            // A task nobody owns any more (its operation finished): stop it.
            dataTask.cancel()
            completionHandler(.allow)
            return
        }
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
        #else
        if let forward = delegate.urlSession(_:dataTask:didReceive:completionHandler:) {
            forward(session, dataTask, response, completionHandler)
        } else {
            completionHandler(.allow)
        }
        #endif
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let delegate = delegate(for: dataTask) else { return }
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, dataTask: dataTask, didReceive: data)
        #else
        delegate.urlSession?(session, dataTask: dataTask, didReceive: data)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let delegate = delegate(for: task) else { return }
        forget(task)
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, task: task, didCompleteWithError: error)
        #else
        delegate.urlSession?(session, task: task, didCompleteWithError: error)
        #endif
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        // No owner: refuse (default handling hangs on Linux).
        guard let delegate = delegate(for: task) else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        #else
        if let forward = delegate.urlSession(_:task:didReceive:completionHandler:) {
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
        guard let delegate = delegate(for: task) else {
            // No owner: its operation finished and has cancelled (or is cancelling) the task. Calling the
            // completion handler after a cancel traps in corelibs Foundation, so cancel and drop it.
            task.cancel()
            return
        }
        #if canImport(FoundationNetworking)
        delegate.urlSession(
            session, task: task, willPerformHTTPRedirection: response, newRequest: request,
            completionHandler: completionHandler)
        #else
        if let forward = delegate.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:) {
            forward(session, task, response, request, completionHandler)
        } else {
            completionHandler(request)
        }
        #endif
    }
}

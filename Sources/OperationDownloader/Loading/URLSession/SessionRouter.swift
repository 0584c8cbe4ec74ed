import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of a URLSession transport's one session: forwards each task's callbacks to whoever owns the
/// task.
///
/// A transfer binds its task before resuming it: to the operation when the operation's class may override its
/// `URLSessionDataDelegate` methods (they hand the events back to the transfer), else straight to the transfer
/// (no hop through the operation, and no lookup of its transfer per event). Operations of other classes, which
/// create their own tasks on the session, are registered instead (by their adapter, ForeignOperation.swift) and
/// found on the first callback of an unknown task by their `dataTask`. A separate object (not the downloader) so the session, which retains its
/// delegate until invalidated, does not keep the downloader alive.
final class SessionRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `lock` guards both maps
    /// Who gets a task's callbacks.
    private enum Target {
        /// An operation's delegate methods (and the transfer behind them, when the operation has one).
        case delegate(any URLSessionDataDelegate, URLSessionTransfer?)
        case transfer(URLSessionTransfer)
    }

    private let lock = NSLock()
    /// Registered operations whose task is not known yet (they make it themselves).
    private var taskMakers: [ObjectIdentifier: any ImageDownloaderOperationProtocol] = [:]
    private var byTask: [Int: (task: URLSessionTask, target: Target)] = [:]

    /// Routes the callbacks of the tasks `operation` creates itself (found by its `dataTask`).
    func register(_ operation: any ImageDownloaderOperationProtocol) {
        lock.withLock { taskMakers[ObjectIdentifier(operation)] = operation }
    }

    /// Forgets `operation` (it finished).
    func unregister(_ operation: any ImageDownloaderOperationProtocol) {
        lock.withLock {
            guard taskMakers.removeValue(forKey: ObjectIdentifier(operation)) == nil else { return }
            let bound = byTask.first { entry in
                if case .delegate(let delegate, _) = entry.value.target { return delegate === operation }
                return false
            }
            if let id = bound?.key { byTask[id] = nil }
        }
    }

    /// Routes `task` to `delegate` (the operation whose delegate methods see the callbacks first, then hand
    /// them to `transfer`).
    func bind(_ task: URLSessionTask, to delegate: any URLSessionDataDelegate, transfer: URLSessionTransfer) {
        lock.withLock { byTask[task.taskIdentifier] = (task, .delegate(delegate, transfer)) }
    }

    /// Routes `task` straight to its transfer.
    func bind(_ task: URLSessionTask, to transfer: URLSessionTransfer) {
        lock.withLock { byTask[task.taskIdentifier] = (task, .transfer(transfer)) }
    }

    /// Ends every task still routed: transfers cancel themselves (after a redirect or challenge decision in
    /// progress: corelibs traps when its completion handler runs after `task.cancel()`, which
    /// `invalidateAndCancel` would do); tasks an operation class made itself are cancelled.
    func cancelAll() {
        let entries = lock.withLock { Array(byTask.values) }
        for (task, target) in entries {
            switch target {
            case .transfer(let transfer), .delegate(_, let transfer?): transfer.cancel()
            case .delegate(_, nil): task.cancel()
            }
        }
    }

    private func target(for task: URLSessionTask) -> Target? {
        lock.withLock {
            if let found = byTask[task.taskIdentifier] { return found.target }
            guard let (key, found) = taskMakers.first(where: { $0.value.dataTask === task }) else { return nil }
            taskMakers[key] = nil
            byTask[task.taskIdentifier] = (task, .delegate(found, nil))
            return .delegate(found, nil)
        }
    }

    /// Stops routing `task`: its transfer ended (cancelled, or refused the final 401). Late callbacks then find no
    /// owner and are dropped or refused safely. Without this, a task whose completion corelibs never reports
    /// (seen: a task cancelled under load ends `.completed` with no delegate call) kept its operation alive,
    /// and with it the transport and the session.
    func forget(_ task: URLSessionTask) {
        lock.withLock { byTask[task.taskIdentifier] = nil }
    }

    /// How many tasks and custom operations are routed now (for tests).
    var routeCount: Int { lock.withLock { byTask.count + taskMakers.count } }

    /// Stops routing every task: the transport is invalidated once no operation is left, so nobody needs them.
    func forgetAll() {
        let dropped = lock.withLock {
            defer {
                byTask = [:]
                taskMakers = [:]
            }
            return (byTask, taskMakers)
        }
        _ = dropped  // released outside the lock: an operation's deinit may call back in
    }

    // MARK: - Forwarding

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let delegate: any URLSessionDataDelegate
        switch target(for: dataTask) {
        case .transfer(let transfer)?:
            transfer.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
            return
        case .delegate(let found, _)?:
            delegate = found
        case nil:
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
        let delegate: any URLSessionDataDelegate
        switch target(for: dataTask) {
        case .transfer(let transfer)?:
            transfer.urlSession(session, dataTask: dataTask, didReceive: data)
            return
        case .delegate(let found, _)?:
            delegate = found
        case nil:
            return
        }
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, dataTask: dataTask, didReceive: data)
        #else
        delegate.urlSession?(session, dataTask: dataTask, didReceive: data)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let found = target(for: task)
        forget(task)
        let delegate: any URLSessionDataDelegate
        switch found {
        case .transfer(let transfer)?:
            transfer.urlSession(session, task: task, didCompleteWithError: error)
            return
        case .delegate(let bound, _)?:
            delegate = bound
        case nil:
            return
        }
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
        let delegate: any URLSessionDataDelegate
        switch target(for: task) {
        case .transfer(let transfer)?:
            transfer.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
            return
        case .delegate(let found, _)?:
            delegate = found
        case nil:
            // No owner: refuse (default handling hangs on Linux).
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
        let delegate: any URLSessionDataDelegate
        switch target(for: task) {
        case .transfer(let transfer)?:
            transfer.urlSession(
                session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                completionHandler: completionHandler)
            return
        case .delegate(let found, _)?:
            delegate = found
        case nil:
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

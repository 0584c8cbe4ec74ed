import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one way into the operation's state (AsyncHTTPClient's `modifyStateAndRunActions`): every event runs as a
/// transition of `DownloadStateMachine` under the operation's one lock, and the action it returns is performed
/// here, after the lock is released (the monitor, the transport, the callers' queues and user code are never
/// called under it).
extension ImageDownloaderOperation {
    /// Applies `event` under the lock, performs its action outside it, and returns its result.
    @inline(__always) @discardableResult
    func modifyStateAndRunActions<Result>(
        _ event: (inout DownloadStateMachine) -> (DownloadStateMachine.Action, Result)
    ) -> Result {
        let (action, result) = state.withLock { event(&$0) }
        if case .none = action { return result }
        run(action)
        return result
    }

    /// An event whose only outcome is its action.
    @inline(__always)
    func modifyStateAndRunActions(_ event: (inout DownloadStateMachine) -> DownloadStateMachine.Action) {
        modifyStateAndRunActions { (event(&$0), ()) }
    }

    /// An event without action (a read, or a setting).
    @inline(__always) @discardableResult
    func modifyState<Result>(_ event: (inout DownloadStateMachine) -> Result) -> Result {
        modifyStateAndRunActions { (.none, event(&$0)) }
    }

    private func run(_ action: DownloadStateMachine.Action) {
        switch action {
        case .none:
            break
        case .stopClocks(let clocks):
            clocks.timeouts.stop(clocks.running)
        case .cancelTransfer(let transfer):
            transfer.cancel()
        case .finish(let end):
            // A backoff wait ends now (its completion sees the finished phase and does nothing).
            end.retryWait?.cancel()
            if let clocks = end.clocks { clocks.timeouts.stop(clocks.running) }
            end.transferToCancel?.cancel()
            if let observation { observeEnd(end, observation) }
            callers.answerAll(end.ending, after: end.notifications, object: self)
            release(end.release)
            setFinished()
        case .waitToRetry(let retry):
            if let clocks = retry.clocks { clocks.timeouts.stop(clocks.running) }
            retry.transferToCancel?.cancel()
            callers.post(.stop, object: self)
            let wait = retry.wait
            // Strong capture: the wait completes exactly once (elapsed, or cancelled by the end), which ends the
            // cycle.
            wait.begin(seconds: retry.delay) { outcome in
                guard outcome == .elapsed else { return }  // cancelled by the end, which answers the callers
                // Off the deadline monitor's thread: starting an attempt may read the HTTP cache from disk.
                DispatchQueue.global().async { self.startNextAttempt(after: wait) }
            }
        }
    }

    /// [Observability] The end's report, before the answers: the open request, the HTTP cache lookup, the span.
    private func observeEnd(_ end: DownloadStateMachine.Finish, _ observation: DownloadObservation) {
        let error: (any Error)? = if case .failure(let error) = end.ending { error } else { nil }
        let storage = httpTransaction?.mayStore == true ? httpTransaction?.cache?.storageLabel : nil
        observation.downloadEnded(error: error, end.observed, httpCacheStorage: storage)
    }

    /// Drops everything big before `isFinished` flips: finished operations can linger in OperationQueue.
    private func release(_ resources: DownloadStateMachine.Release) {
        httpTransaction?.release()
        // Its transfer is cancelled or complete: the owned session ends once it is done.
        if resources.ownsTransport { resources.transport?.invalidate(cancellingTransfers: false) }
        if let background = resources.backgroundTask { background.provider.endBackgroundTask(background.id) }
    }
}

import Foundation
import OperationDownloader
import Testing

/// Records one prefetch call's handlers; `waitForCompletion` resumes when `completed` ran (no polling), or after a
/// generous bound against hangs, recording an issue.
final class PrefetchRecorder: @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private var progressCalls: [(finished: Int, total: Int)] = []
    private var completions: [(finished: Int, skipped: Int)] = []
    private var events: [String] = []
    private var waiters: [CheckedContinuation<Bool, Never>] = []

    var progress: @Sendable (Int, Int) -> Void {
        { [self] finished, total in lock.withLock {
            progressCalls.append((finished, total))
            events.append("progress")
        } }
    }

    var completed: @Sendable (Int, Int) -> Void {
        { [self] finished, skipped in
            let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
                completions.append((finished, skipped))
                events.append("completed")
                defer { waiters = [] }
                return waiters
            }
            for waiter in ready { waiter.resume(returning: true) }
        }
    }

    var progressList: [(finished: Int, total: Int)] { lock.withLock { progressCalls } }
    var completionList: [(finished: Int, skipped: Int)] { lock.withLock { completions } }
    var eventList: [String] { lock.withLock { events } }

    /// The single completion, as "finished/skipped" (nil before it came).
    var result: String? { completionList.first.map { "\($0.finished)/\($0.skipped)" } }

    @discardableResult
    func waitForCompletion(timeout: TimeInterval = 60, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let completedInTime = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let done: Bool = lock.withLock {
                if !completions.isEmpty { return true }
                waiters.append(continuation)
                return false
            }
            if done {
                continuation.resume(returning: true)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let late: [CheckedContinuation<Bool, Never>] = lock.withLock {
                    defer { waiters = [] }
                    return waiters
                }
                for waiter in late { waiter.resume(returning: false) }
            }
        }
        if !completedInTime { Issue.record("the prefetch did not complete within \(timeout) s", sourceLocation: sourceLocation) }
        return completedInTime
    }
}

import Foundation
import Decoding
import OperationDownloader
import Testing

/// Records one caller's callbacks and lets a test await a condition on them without polling: each callback
/// wakes the waiters whose condition now holds. Waits are bounded only against hangs.
final class AsyncRecorder: @unchecked Sendable {  // `lock` guards every var
    struct Snapshot {
        var progress: [(Int, Int)] = []
        var partials: [DecodedImage] = []
        var finals: [DownloadRecorder.Final] = []
        var events: [String] = []
    }

    private let lock = NSLock()
    private var snapshot = Snapshot()
    private var waiters: [UUID: (condition: (Snapshot) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]

    var progress: ImageDownloaderProgressHandler {
        { [self] received, expected, _ in update { $0.progress.append((received, expected)); $0.events.append("progress") } }
    }

    var completed: ImageDownloaderCompletedHandler {
        { [self] image, data, error, finished in
            update {
                if finished {
                    $0.finals.append(DownloadRecorder.Final(image: image, data: data, error: error))
                    $0.events.append("final")
                } else {
                    if let image { $0.partials.append(image) }
                    $0.events.append("partial")
                }
            }
        }
    }

    var current: Snapshot { lock.withLock { snapshot } }
    var finals: [DownloadRecorder.Final] { current.finals }
    var final: DownloadRecorder.Final? { current.finals.first }
    var downloaderError: ImageDownloaderError? { final?.error as? ImageDownloaderError }
    var progressList: [(Int, Int)] { current.progress }
    var partials: [DecodedImage] { current.partials }

    private func update(_ change: (inout Snapshot) -> Void) {
        let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
            change(&snapshot)
            let done = waiters.filter { $0.value.condition(snapshot) }
            for id in done.keys { waiters[id] = nil }
            return done.values.map(\.continuation)
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Returns true once `condition` holds (at once if it already does), false after `timeout`.
    @discardableResult
    func wait(
        timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: @escaping (Snapshot) -> Bool
    ) async -> Bool {
        let id = UUID()
        let met: Bool = await withCheckedContinuation { continuation in
            let now: Bool = lock.withLock {
                if condition(snapshot) { return true }
                waiters[id] = (condition, continuation)
                return false
            }
            if now {
                continuation.resume(returning: true)
                return
            }
            afterTimeout(timeout) {
                let expired = self.lock.withLock { self.waiters.removeValue(forKey: id) }
                expired?.continuation.resume(returning: false)
            }
        }
        if !met { Issue.record("condition not met within \(timeout) s: \(current.events)", sourceLocation: sourceLocation) }
        return met
    }

    /// The final answer arrived.
    @discardableResult
    func completion(timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await wait(timeout: timeout, sourceLocation: sourceLocation) { !$0.finals.isEmpty }
    }
}

/// Runs `action` after `seconds` (the bound of a continuation-based wait: it resumes the waiter with a failure
/// if nothing did before).
func afterTimeout(_ seconds: TimeInterval, _ action: @escaping @Sendable () -> Void) {
    Task {
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        action()
    }
}

import Foundation
import Testing

/// A value behind a lock that a test can await a condition on, without polling: each change wakes the waiters
/// whose condition now holds. Waits are bounded only against hangs (the bound resumes a waiter with false).
final class Watched<Value>: @unchecked Sendable {  // `lock` guards `value` and `waiters`
    private struct Waiter {
        let condition: (Value) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
        /// The bound's timer, cancelled when the condition is met first (a timer left sleeping would keep its
        /// closure, and a recorder's images with it, for the whole bound: the RSS check saw +20 MiB).
        var timer: Task<Void, Never>?
    }

    private let lock = NSLock()
    private var value: Value
    private var waiters: [UUID: Waiter] = [:]

    init(_ value: Value) {
        self.value = value
    }

    var current: Value { lock.withLock { value } }

    /// Changes the value and wakes every waiter whose condition now holds.
    @discardableResult
    func withLock<R>(_ change: (inout Value) -> R) -> R {
        let (result, ready): (R, [Waiter]) = lock.withLock {
            let result = change(&value)
            let done = waiters.filter { $0.value.condition(value) }
            for id in done.keys { waiters[id] = nil }
            return (result, Array(done.values))
        }
        for waiter in ready {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: true)
        }
        return result
    }

    /// True once `condition` holds (at once if it already does); false after `timeout`, recorded as an issue
    /// with `describe` of the value at that moment.
    @discardableResult
    func wait(
        timeout: TimeInterval = 120, sourceLocation: SourceLocation = #_sourceLocation,
        describe: @escaping (Value) -> String = { "\($0)" }, until condition: @escaping (Value) -> Bool
    ) async -> Bool {
        let id = UUID()
        let met: Bool = await withCheckedContinuation { continuation in
            let now: Bool = lock.withLock {
                if condition(value) { return true }
                waiters[id] = Waiter(condition: condition, continuation: continuation)
                return false
            }
            if now {
                continuation.resume(returning: true)
                return
            }
            let timer = afterTimeout(timeout) { [weak self] in
                guard let self else { return }
                let expired = lock.withLock { waiters.removeValue(forKey: id) }
                expired?.continuation.resume(returning: false)
            }
            // Met meanwhile: the waiter is gone, so nobody else will cancel the timer.
            let stillWaiting: Bool = lock.withLock {
                guard waiters[id] != nil else { return false }
                waiters[id]?.timer = timer
                return true
            }
            if !stillWaiting { timer.cancel() }
        }
        if !met { Issue.record("condition not met within \(timeout) s: \(describe(current))", sourceLocation: sourceLocation) }
        return met
    }
}

import Dispatch
import Testing

/// Runs a CPU-heavy suite or test on dispatch threads instead of Swift's cooperative pool.
///
/// On a 2-core machine the cooperative pool has two threads, and every test of the process shares them: two
/// long synchronous decodes on it leave the end-to-end tests' continuations waiting for a minute, by which time
/// their server-side holds and idle timeouts have expired. Decoding suites carry `.offThePool`, so the
/// pool stays free for the tests that wait on real time; the CPU is still shared, by the kernel, fairly.
public struct OffThePoolTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Runs the suite's or test's body on dispatch threads, off the cooperative pool (see `OffThePoolTrait`).
    public static var offThePool: Self { Self() }
}

/// A task executor over a concurrent dispatch queue (libdispatch bounds its threads by the cores, and adds one
/// when a thread blocks). Utility QoS: its root queue has threads of its own, so long decodes never hold the
/// default-QoS threads that `DispatchQueue.global()` work (servers' connection handlers, retries) runs on.
final class DispatchTaskExecutor: TaskExecutor {
    static let shared = DispatchTaskExecutor()
    private let queue = DispatchQueue(label: "OffThePool", qos: .utility, attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

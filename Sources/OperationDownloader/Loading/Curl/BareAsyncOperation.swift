import Foundation

/// For the benchmarks' probes only (`@_spi(Benchmarks)`): an asynchronous `Operation` with nothing but the manual
/// KVO corelibs needs (SPEC §5), so that a probe measures what an `Operation` per download costs on its own.
/// `start()` marks it executing and calls `begin()`; the subclass calls `finish()` once its work has ended.
@_spi(Benchmarks)
open class BareAsyncOperation: Operation, @unchecked Sendable {  // `lock` guards both flags
    private let lock = NSLock()
    private var executingFlag = false
    private var finishedFlag = false

    public override init() {
        super.init()
    }

    open override var isAsynchronous: Bool { true }
    open override var isExecuting: Bool { lock.withLock { executingFlag } }
    open override var isFinished: Bool { lock.withLock { finishedFlag } }

    open override func start() {
        willChangeValue(forKey: "isExecuting")
        lock.withLock { executingFlag = true }
        didChangeValue(forKey: "isExecuting")
        begin()
    }

    /// The work: starts it, and arranges for `finish()` once it has ended.
    open func begin() {}

    /// Flips `isExecuting` and `isFinished`, with their KVO notifications.
    public final func finish() {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        lock.withLock {
            executingFlag = false
            finishedFlag = true
        }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
    }
}

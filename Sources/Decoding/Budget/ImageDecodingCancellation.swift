import Foundation

/// Cancels a decode that is waiting for the decode memory budget (`ImageDecodingOptions.cancellation`): the
/// wait ends with `ImageDecodingError.cancelled`. A decode already running is not interrupted.
public final class ImageDecodingCancellation: @unchecked Sendable, Equatable {  // `lock` guards both fields
    private let lock = NSLock()
    private var cancelled = false
    /// Budgets with a decode of this token waiting in them: woken on `cancel()`.
    private var waitingIn: [ObjectIdentifier: DecodeBudgetLedger] = [:]

    public init() {}

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { lock.withLock { cancelled } }

    /// Ends every wait of this token (now and later) with `.cancelled`.
    public func cancel() {
        let ledgers: [DecodeBudgetLedger] = lock.withLock {
            cancelled = true
            return Array(waitingIn.values)
        }
        for ledger in ledgers { ledger.wakeWaiters() }
    }

    /// Registers a wait in `ledger`; false when already cancelled.
    func beginWaiting(in ledger: DecodeBudgetLedger) -> Bool {
        lock.withLock {
            guard !cancelled else { return false }
            waitingIn[ObjectIdentifier(ledger)] = ledger
            return true
        }
    }

    func endWaiting(in ledger: DecodeBudgetLedger) {
        lock.withLock { _ = waitingIn.removeValue(forKey: ObjectIdentifier(ledger)) }
    }

    public static func == (a: ImageDecodingCancellation, b: ImageDecodingCancellation) -> Bool { a === b }
}

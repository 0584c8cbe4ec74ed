import Foundation

/// The accounting behind an `ImageDecodingBudget`: bytes reserved, and the decodes waiting in FIFO order.
///
/// A waiter proceeds when it is first in line and its bytes (capped at the limit, so one waiter may need
/// all of it but never more) fit beside what is reserved. Reservations are only ever waited for by a decode
/// that holds none, so every holder makes progress and releases: no cycle, no deadlock.
final class DecodeBudgetLedger: @unchecked Sendable {  // `condition` guards every field
    /// The smallest limit accepted: below this nothing useful decodes.
    static let minimumLimit = 1 << 20

    private let condition = NSCondition()
    private var limitBytes: Int
    private var reservedBytes = 0
    private var line: [UInt64] = []
    private var nextTicket: UInt64 = 0
    /// Called (under the ledger's lock) each time a reservation starts waiting: lets tests order events
    /// without polling.
    private var waitObserver: (@Sendable () -> Void)?

    init(limit: Int) {
        limitBytes = max(Self.minimumLimit, limit)
    }

    var limit: Int { condition.withLock { limitBytes } }
    var reserved: Int { condition.withLock { reservedBytes } }
    var waiting: Int { condition.withLock { line.count } }

    func observeWaits(_ observer: @escaping @Sendable () -> Void) {
        condition.withLock { waitObserver = observer }
    }

    func setLimit(_ bytes: Int) {
        condition.withLock {
            limitBytes = max(Self.minimumLimit, bytes)
            condition.broadcast()
        }
    }

    /// Waits until `bytes` (capped at the limit) fit and returns what was reserved. `waited` is told how long,
    /// in nanoseconds, when the reservation had to wait (also when the wait ended with a cancel).
    func reserve(_ bytes: Int, cancellation: ImageDecodingCancellation?,
                 waited: ((_ nanoseconds: UInt64) -> Void)? = nil) throws -> Int {
        let wanted = max(0, bytes)
        if let cancellation, !cancellation.beginWaiting(in: self) { throw ImageDecodingError.cancelled }
        defer { cancellation?.endWaiting(in: self) }
        var waitBegan: UInt64?
        // Declared before the lock's defer, so it runs after the unlock: the hook never runs under the lock.
        defer { if let waitBegan, let waited { waited(DispatchTime.now().uptimeNanoseconds &- waitBegan) } }
        condition.lock()
        defer { condition.unlock() }
        let ticket = nextTicket
        nextTicket &+= 1
        line.append(ticket)
        var announced = false
        while true {
            let need = min(wanted, limitBytes)
            if line.first == ticket && reservedBytes + need <= limitBytes {
                line.removeFirst()
                reservedBytes += need
                condition.broadcast()  // the next in line may fit too
                return need
            }
            if cancellation?.isCancelled == true {
                line.removeAll { $0 == ticket }
                condition.broadcast()
                throw ImageDecodingError.cancelled
            }
            if !announced {
                announced = true
                if waited != nil { waitBegan = DispatchTime.now().uptimeNanoseconds }
                waitObserver?()
            }
            condition.wait()
        }
    }

    /// Reserves `bytes` only when nobody waits and they fit now.
    func reserveIfAvailable(_ bytes: Int) -> Int? {
        condition.withLock {
            let need = min(max(0, bytes), limitBytes)
            guard line.isEmpty, reservedBytes + need <= limitBytes else { return nil }
            reservedBytes += need
            return need
        }
    }

    func release(_ bytes: Int) {
        condition.withLock {
            reservedBytes = max(0, reservedBytes - bytes)
            condition.broadcast()
        }
    }

    /// Lets waiters look at their cancellation again.
    func wakeWaiters() {
        condition.withLock { condition.broadcast() }
    }
}

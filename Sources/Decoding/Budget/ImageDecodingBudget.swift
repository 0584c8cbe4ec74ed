import Foundation

/// The decode memory budget: pixel buffers of decodes in flight are reserved against it, so the memory a
/// process spends on decoding stays bounded however many downloads run at once (Docs/Decoding.md, "Memory").
///
/// One per process by default (`.shared`, which every `ImageDecodingOptions` uses unless given another).
/// Its limit defaults to a quarter of the memory the process may use (the cgroup's `memory.max`, else the
/// physical memory), at most 512 MiB. A reservation that does not fit waits, first come first served, until
/// earlier ones are released; a request for more than the whole budget is served alone once everything
/// else is released (it never deadlocks). Decoders reserve at the header, before allocating; an animation
/// reserves while it composites a frame.
public struct ImageDecodingBudget: Sendable, Equatable {
    let ledger: DecodeBudgetLedger

    /// The process budget. Assigning a budget to it sets the process budget's limit to that budget's limit
    /// (reservations in flight stay accounted for).
    public static var shared: ImageDecodingBudget {
        get { processBudget }
        set { processBudget.limitBytes = newValue.limitBytes }
    }

    private static let processBudget = ImageDecodingBudget(limitBytes: defaultLimitBytes)

    /// The default limit: a quarter of the cgroup's `memory.max` (or of the physical memory when there is no
    /// cgroup limit), at most 512 MiB, at least 16 MiB.
    public static let defaultLimitBytes: Int = defaultLimit(available: MachineMemory.available)

    /// The default limit for a process that may use `available` bytes.
    static func defaultLimit(available: Int) -> Int {
        max(16 << 20, min(512 << 20, available / 4))
    }

    /// An independent budget with its own accounting (tests, or a subsystem that should not compete with
    /// the rest of the process).
    public init(limitBytes: Int) {
        ledger = DecodeBudgetLedger(limit: limitBytes)
    }

    /// Bytes that decodes in flight may hold together. Changing it wakes waiting decodes. Values below one
    /// mebibyte are raised to one mebibyte.
    public var limitBytes: Int {
        get { ledger.limit }
        nonmutating set { ledger.setLimit(newValue) }
    }

    /// Bytes reserved right now.
    public var reservedBytes: Int { ledger.reserved }

    /// Decodes waiting for room right now.
    public var waitingCount: Int { ledger.waiting }

    /// Reserves `bytes` (at most the whole budget), waiting in FIFO order until they fit. Throws
    /// `ImageDecodingError.cancelled` when `cancellation` is cancelled before that. Release the reservation
    /// when the memory is freed (it releases itself when it goes away).
    public func reserve(_ bytes: Int, cancellation: ImageDecodingCancellation? = nil) throws -> Reservation {
        let granted = try ledger.reserve(bytes, cancellation: cancellation)
        return Reservation(ledger: ledger, bytes: granted)
    }

    /// `reserve`, telling `waited` how long (nanoseconds) when the reservation had to wait.
    func reserve(_ bytes: Int, cancellation: ImageDecodingCancellation?, waited: ((UInt64) -> Void)?) throws -> Reservation {
        let granted = try ledger.reserve(bytes, cancellation: cancellation, waited: waited)
        return Reservation(ledger: ledger, bytes: granted)
    }

    /// Reserves `bytes` only if they fit now and nobody is waiting; nil otherwise.
    public func reserveIfAvailable(_ bytes: Int) -> Reservation? {
        ledger.reserveIfAvailable(bytes).map { Reservation(ledger: ledger, bytes: $0) }
    }

    public static func == (a: ImageDecodingBudget, b: ImageDecodingBudget) -> Bool { a.ledger === b.ledger }

    /// Bytes held against a budget until `release()` (or until the reservation goes away).
    public final class Reservation: @unchecked Sendable {  // `lock` guards `released`
        /// Bytes held (the request, capped at the budget's limit when it was granted).
        public let bytes: Int
        private let ledger: DecodeBudgetLedger
        private let lock = NSLock()
        private var released = false

        init(ledger: DecodeBudgetLedger, bytes: Int) {
            self.ledger = ledger
            self.bytes = bytes
        }

        /// Gives the bytes back (once; later calls do nothing).
        public func release() {
            let first = lock.withLock { () -> Bool in
                defer { released = true }
                return !released
            }
            if first { ledger.release(bytes) }
        }

        deinit { release() }
    }
}

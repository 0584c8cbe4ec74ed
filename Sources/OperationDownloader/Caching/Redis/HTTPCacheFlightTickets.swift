import Foundation

/// The right to fetch one cache key for the fleet (single-flight): the download that holds it sends the
/// request and stores the response; then `finish()` tells the waiters to read the entry, or `abandon()` (no
/// response: cancelled, failed) hands the fetch to a waiter. Ends once; later calls do nothing.
final class HTTPCacheFlightLease: @unchecked Sendable {  // `ended` is a OnceFlag
    let name: String
    let token: Data
    private let ended = OnceFlag()
    private weak var flights: HTTPCacheFlights?

    init(name: String, token: Data, flights: HTTPCacheFlights) {
        self.name = name
        self.token = token
        self.flights = flights
    }

    /// The response was received (and stored, if storable): waiters re-read the cache.
    func finish() {
        guard ended.claim() else { return }
        flights?.finished(self)
    }

    /// No response: the next waiter (in this process first, else in the fleet) fetches instead.
    func abandon() {
        guard ended.claim() else { return }
        flights?.abandoned(self)
    }
}

/// A download waiting for another's fetch of the same cache key. Ends exactly once with an `Outcome`, on which
/// the handler given to `notify` runs (off the caller's thread).
final class HTTPCacheFlightWait: @unchecked Sendable {  // `state` guarded by `lock`
    enum Outcome {
        /// The holder got a response: read the cache again, and fetch without waiting if it holds nothing usable.
        case done
        /// The holder is gone: this download fetches, holding this lease.
        case lead(HTTPCacheFlightLease)
        /// Waited `maximumWait`, or Redis became unavailable: fetch without waiting.
        case gaveUp
        case cancelled
    }

    private enum State {
        case waiting(handler: (@Sendable (Outcome) -> Void)?)
        case ended(Outcome)
    }

    let name: String
    /// Monotonic nanoseconds: when the wait began, and after which the waiter stops waiting.
    let began: UInt64
    let deadline: UInt64
    private let lock = NSLock()
    private var state = State.waiting(handler: nil)
    private weak var flights: HTTPCacheFlights?

    init(name: String, began: UInt64, deadline: UInt64, flights: HTTPCacheFlights) {
        self.name = name
        self.began = began
        self.deadline = deadline
        self.flights = flights
    }

    /// Runs `handler` (on a global queue) when the wait ends, or at once if it has ended.
    func notify(_ handler: @escaping @Sendable (Outcome) -> Void) {
        let ended: Outcome? = lock.withLock {
            switch state {
            case .waiting:
                state = .waiting(handler: handler)
                return nil
            case .ended(let outcome):
                return outcome
            }
        }
        if let ended { DispatchQueue.global().async { handler(ended) } }
    }

    /// Stops waiting (the download was cancelled): the handler gets `.cancelled`.
    func cancel() {
        flights?.cancelled(self)
        end(.cancelled)
    }

    /// Ends the wait; false when it had ended already (a lease it carries is then the caller's to pass on).
    @discardableResult
    func end(_ outcome: Outcome) -> Bool {
        let handler: ((@Sendable (Outcome) -> Void)?)? = lock.withLock {
            guard case .waiting(let handler) = state else { return nil }
            state = .ended(outcome)
            return .some(handler)
        }
        guard let handler else { return false }
        flights?.waitEnded(self)
        if let handler { DispatchQueue.global().async { handler(outcome) } }
        return true
    }
}

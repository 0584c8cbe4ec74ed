import Foundation

/// Keeps a failing Redis out of the downloads' way: after a failure every call is refused at once for a
/// back-off interval, then ONE call tries the server again; success closes the breaker, failure doubles the
/// interval (up to a maximum). Not thread-safe by itself: `RedisConnectionPool` guards it with its lock.
struct RedisCircuitBreaker {
    enum State: Equatable {
        /// Calls go to the server.
        case closed
        /// Calls are refused until `until` (monotonic nanoseconds); `interval` is the current back-off.
        case open(until: UInt64, interval: TimeInterval)
        /// One call is trying the server; the others are refused meanwhile.
        case probing(interval: TimeInterval)
    }

    /// What a failure did.
    enum Transition: Equatable {
        /// The breaker just opened: the start of an outage (the moment to warn).
        case opened(retryIn: TimeInterval)
        /// A probe failed: still open, for longer.
        case stillOpen(retryIn: TimeInterval)
        /// Another call had already opened it.
        case none
    }

    let initialInterval: TimeInterval
    let maximumInterval: TimeInterval
    private(set) var state = State.closed

    init(initialInterval: TimeInterval, maximumInterval: TimeInterval) {
        self.initialInterval = max(0.001, initialInterval)
        self.maximumInterval = max(self.initialInterval, maximumInterval)
    }

    /// Whether a call may go to the server at `now`; an expired open breaker admits one probe.
    mutating func admit(now: UInt64) -> Bool {
        switch state {
        case .closed:
            return true
        case .open(let until, let interval):
            guard now >= until else { return false }
            state = .probing(interval: interval)
            return true
        case .probing:
            return false
        }
    }

    /// Closes the breaker; returns whether it was open or probing (an outage ends).
    @discardableResult
    mutating func succeeded() -> Bool {
        defer { state = .closed }
        return state != .closed
    }

    mutating func failed(now: UInt64) -> Transition {
        switch state {
        case .closed:
            state = .open(until: now + Self.nanoseconds(initialInterval), interval: initialInterval)
            return .opened(retryIn: initialInterval)
        case .probing(let interval):
            let next = min(maximumInterval, interval * 2)
            state = .open(until: now + Self.nanoseconds(next), interval: next)
            return .stillOpen(retryIn: next)
        case .open:
            return .none
        }
    }

    var isClosed: Bool { state == .closed }

    private static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        UInt64(max(0, min(seconds, 86_400)) * 1_000_000_000)
    }
}

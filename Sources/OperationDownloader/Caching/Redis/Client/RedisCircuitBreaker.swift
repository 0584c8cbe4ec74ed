import Foundation

/// Keeps a failing Redis node out of the downloads' way: after a failure every call to the node is refused at
/// once, and a probe (`RedisConnectionPool`'s, in the background: never a download) tries the node after a
/// back-off interval; success closes the breaker, failure doubles the interval (up to a maximum). Not
/// thread-safe by itself: the pool guards it with its lock.
struct RedisCircuitBreaker {
    enum State: Equatable {
        /// Calls go to the node.
        case closed
        /// Calls are refused; the next probe is due at `until` (monotonic nanoseconds); `interval` is the back-off.
        case open(until: UInt64, interval: TimeInterval)
        /// The probe is trying the node; calls are refused meanwhile.
        case probing(interval: TimeInterval)
    }

    /// What a failure did.
    enum Transition: Equatable {
        /// The breaker just opened: the start of an outage (the moment to warn).
        case opened(retryIn: TimeInterval)
        /// A probe failed: still open, for longer.
        case stillOpen(retryIn: TimeInterval)
        /// It was open already (another call's failure opened it).
        case none
    }

    let initialInterval: TimeInterval
    let maximumInterval: TimeInterval
    private(set) var state = State.closed

    init(initialInterval: TimeInterval, maximumInterval: TimeInterval) {
        self.initialInterval = max(0.001, initialInterval)
        self.maximumInterval = max(self.initialInterval, maximumInterval)
    }

    var isClosed: Bool { state == .closed }

    /// Whether the probe may try the node at `now` (the back-off has passed); it then holds the probe.
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

    /// A call or the probe succeeded; true when this closed an open breaker (the outage ended).
    @discardableResult
    mutating func succeeded() -> Bool {
        defer { state = .closed }
        return state != .closed
    }

    mutating func failed(now: UInt64) -> Transition {
        switch state {
        case .closed:
            state = .open(until: now + RedisDeadline.nanoseconds(initialInterval), interval: initialInterval)
            return .opened(retryIn: initialInterval)
        case .probing(let interval):
            let next = min(maximumInterval, interval * 2)
            state = .open(until: now + RedisDeadline.nanoseconds(next), interval: next)
            return .stillOpen(retryIn: next)
        case .open:
            return .none
        }
    }

    /// When the next probe is due (monotonic nanoseconds), nil unless open.
    var nextProbe: UInt64? {
        if case .open(let until, _) = state { return until }
        return nil
    }
}

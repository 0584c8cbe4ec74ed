import Foundation

/// A point on the monotonic clock by which something must be done: one for a whole pipeline (every write and
/// every reply), one for a connection's set-up, one for a name's resolution. Never a bound per `recv`.
struct RedisDeadline: Sendable, Comparable {
    /// Monotonic nanoseconds.
    let uptime: UInt64

    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// `seconds` from now (clamped to 0 ... 1 hour).
    init(in seconds: TimeInterval) {
        uptime = Self.now + Self.nanoseconds(seconds)
    }

    init(uptime: UInt64) {
        self.uptime = uptime
    }

    var hasPassed: Bool { Self.now >= uptime }

    /// Milliseconds left, rounded up, for poll(2): 0 once passed.
    var pollMilliseconds: Int32 {
        let now = Self.now
        guard uptime > now else { return 0 }
        return Int32(clamping: (uptime - now + 999_999) / 1_000_000)
    }

    var secondsLeft: TimeInterval {
        let now = Self.now
        return uptime > now ? TimeInterval(uptime - now) / 1e9 : 0
    }

    static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(min(seconds, 3600) * 1e9)
    }

    static func < (lhs: RedisDeadline, rhs: RedisDeadline) -> Bool { lhs.uptime < rhs.uptime }
}

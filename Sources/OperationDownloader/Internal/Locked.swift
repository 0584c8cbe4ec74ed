import Foundation

/// A value behind an `NSLock`: the small building block for the package's thread-safe state.
final class Locked<Value>: @unchecked Sendable {  // `lock` guards `value`
    private let lock = NSLock()
    /// Only touched under `lock`, so the runtime's dynamic exclusivity check (an access-set insertion per
    /// access, a measurable share of a small download's instructions) is redundant here.
    @exclusivity(unchecked) private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    var current: Value { withLock { $0 } }
}

/// A flag that can be claimed once: `claim()` returns true for exactly one caller.
final class OnceFlag: @unchecked Sendable {  // `lock` guards `claimed`
    private let lock = NSLock()
    private var claimed = false

    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if claimed { return false }
        claimed = true
        return true
    }

    var isClaimed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return claimed
    }
}

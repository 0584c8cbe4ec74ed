import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a mutex: the small building block for the package's thread-safe state.
///
/// The value and its `pthread_mutex_t` share one heap object (`LockedStorage`). An `NSLock` beside the value
/// cost two more allocations (the lock object and, in corelibs, its malloc'd mutex) and a dynamic call per lock
/// and unlock, for every lock a download made (Docs/Transports.md, "Fewer objects per download"). Copies of a
/// `Locked` share the one value, as references to a class would.
struct Locked<Value>: @unchecked Sendable {  // `storage`'s mutex guards the value
    private let storage: LockedStorage<Value>

    init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try storage.withLock(body)
    }

    /// A copy of the value.
    var current: Value { withLock { $0 } }
}

/// The value as the buffer's header, the mutex as its one element. The value is reached only through
/// pointers under the mutex, so no dynamic exclusivity check runs.
final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> LockedStorage<Value> {
        let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: LockedStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        }
        return storage
    }

    deinit {
        // The header (the value) is destroyed by ManagedBuffer; the element is plain memory.
        withUnsafeMutablePointerToElements { mutex in _ = pthread_mutex_destroy(mutex) }
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}

/// A flag that can be claimed once: `claim()` returns true for exactly one caller.
struct OnceFlag: Sendable {
    private let claimed = Locked(false)

    func claim() -> Bool {
        claimed.withLock { claimed in
            if claimed { return false }
            claimed = true
            return true
        }
    }

    var isClaimed: Bool { claimed.current }
}

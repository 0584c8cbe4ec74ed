import Synchronization

/// A fixed number of values, each made on first use and read afterwards without a lock (one atomic load of the
/// box's address): for handlers reported through on every download. A value made by a racing thread is dropped;
/// the first stored wins. (`AtomicLazyReference` does the same, but its unspecialized `load` looks up generic
/// metadata on every read.)
final class LazySlots<Value: Sendable>: @unchecked Sendable {  // each slot is an atomic, written once
    private final class Box: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    let count: Int
    /// Each slot: 0, or the address of a retained `Box`.
    private let slots: UnsafeMutablePointer<Atomic<UInt>>

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        for i in 0..<count { (slots + i).initialize(to: Atomic(0)) }
    }

    deinit {
        for i in 0..<count {
            let address = slots[i].load(ordering: .acquiring)
            if let pointer = UnsafeRawPointer(bitPattern: address) { Unmanaged<Box>.fromOpaque(pointer).release() }
        }
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// The value of slot `index` (in `0..<count`), made by `make` the first time.
    func value(_ index: Int, make: () -> Value) -> Value {
        if let pointer = UnsafeRawPointer(bitPattern: slots[index].load(ordering: .acquiring)) {
            return Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue().value
        }
        let made = Unmanaged.passRetained(Box(make()))
        let address = UInt(bitPattern: made.toOpaque())
        let (stored, found) = slots[index].compareExchange(
            expected: 0, desired: address, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        // A failed exchange found a racing thread's box (never 0): that one is kept.
        guard !stored, let pointer = UnsafeRawPointer(bitPattern: found) else { return made.takeUnretainedValue().value }
        made.release()
        return Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue().value
    }
}

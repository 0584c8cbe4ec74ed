import CDispatchSync

/// A concurrent dispatch queue for reader/writer sections: `read` runs beside other reads, `write` is a
/// barrier, alone on the queue. Both wait for their section, which runs on the calling thread.
///
/// It calls libdispatch's C functions (`dispatch_sync_f`, `dispatch_barrier_sync_f`, through the
/// CDispatchSync target) with the section's context on the caller's stack. On Linux the Swift overlay's
/// `DispatchQueue.sync(flags: .barrier)` runs a generic, unspecialised helper that costs many times the C
/// function, and the callback store takes two barriers per download (Docs/Transports.md, "Fewer runtime calls
/// per download", has the measurement).
final class ConcurrentQueue: @unchecked Sendable {  // immutable; libdispatch's queue is safe from any thread
    private let queue: od_concurrent_queue_ref

    /// A queue for the life of the process (it is never released).
    init(label: String) {
        queue = od_concurrent_queue_create(label)
    }

    /// The work of one section: a C function over the section's context (`read`'s or `write`'s `context`).
    /// Not a Swift closure: one that captures a variable to write its result costs two allocations a call.
    typealias Section = @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// Runs `section(&context)` beside other reads, never beside a write.
    func read<Context>(_ context: inout Context, _ section: Section) {
        withUnsafeMutablePointer(to: &context) { od_concurrent_queue_sync(queue, $0, section) }
    }

    /// Runs `section(&context)` alone: after every block submitted before it, before every one submitted after.
    func write<Context>(_ context: inout Context, _ section: Section) {
        withUnsafeMutablePointer(to: &context) { od_concurrent_queue_barrier_sync(queue, $0, section) }
    }
}

extension UnsafeMutableRawPointer? {
    /// A section's context (`ConcurrentQueue.Section`), as the type it was passed as.
    func section<Context>(_ type: Context.Type) -> UnsafeMutablePointer<Context> {
        // Never nil: `read` and `write` pass a pointer to their `context`.
        unsafelyUnwrapped.assumingMemoryBound(to: type)
    }
}

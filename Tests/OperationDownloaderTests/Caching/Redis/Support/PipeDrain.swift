import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Collects what a child process writes to its standard output and error, on a thread of its own with poll(2).
///
/// Not `FileHandle.readabilityHandler`: its dispatch read sources, armed and torn down by many processes at
/// once, corrupt libdispatch's epoll bookkeeping on Linux (swift-corelibs-libdispatch#949, SR-12079): a CI run
/// ended with SIGSEGV in `_dispatch_event_loop_drain` while the Redis fleet tests ran.
final class PipeDrain: @unchecked Sendable {  // `output`, `errors` and `ended` guarded by `lock`
    private let lock = NSLock()
    private var output = Data()
    private var errors = Data()
    private var ended = false
    private let finished = DispatchSemaphore(value: 0)
    /// Kept open while reading (a FileHandle closes its descriptor when released).
    private let handles: [FileHandle]

    /// Starts reading both pipes until each reaches end of file, or until `childRunning` says the child has
    /// ended and nothing is left to read (another process that inherited a write end keeps it open).
    init(output: FileHandle, errors: FileHandle, childRunning: @escaping @Sendable () -> Bool) {
        handles = [output, errors]
        let descriptors = [output.fileDescriptor, errors.fileDescriptor]
        for fd in descriptors { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        Thread.detachNewThread { [self] in
            drain(descriptors, childRunning: childRunning)
            lock.withLock { ended = true }
            finished.signal()
        }
    }

    /// Waits until reading ended, then returns everything read (standard output, standard error).
    func wait() -> (output: Data, errors: Data) {
        finished.wait()
        finished.signal()  // later calls return at once
        return lock.withLock { (output, errors) }
    }

    private func drain(_ descriptors: [Int32], childRunning: () -> Bool) {
        var open = descriptors
        while !open.isEmpty {
            var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), 100)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if ready == 0 {
                // Quiet for 100 ms: once the child has ended, whatever it wrote has been read.
                if !childRunning() { return }
                continue
            }
            for entry in polled where entry.revents != 0 {
                if !readAvailable(entry.fd, into: entry.fd == descriptors[0]) { open.removeAll { $0 == entry.fd } }
            }
        }
    }

    /// Reads what is there now; false at end of file or on an error.
    private func readAvailable(_ fd: Int32, into isOutput: Bool) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                let chunk = Data(buffer[0..<count])
                lock.withLock { if isOutput { output.append(chunk) } else { errors.append(chunk) } }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
            return false
        }
    }
}

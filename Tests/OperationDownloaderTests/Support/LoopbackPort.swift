import Foundation

/// Ports on 127.0.0.1 for the servers tests start (nginx, redis-server).
enum LoopbackPort {
    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// A port the kernel picked and released (the server binds it a moment later).
    static func free() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(message: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw Failure(message: "bind() failed") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until the server `process` runs accepts on `port` and has written `pidFile` (a start-up wait,
    /// bounded at 10 s; not a timing assertion). redis-server and nginx write their pid file only once they have
    /// bound their port, so a listener found without it belongs to another server (the port was taken between
    /// `free()` and the bind). False when the process exits first or the bound passes.
    static func waitForServer(port: Int, process: Process, pidFile: URL) -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            if accepts(port), FileManager.default.fileExists(atPath: pidFile.path) { return true }
            usleep(50_000)
        }
        return false
    }

    /// Whether a connection to 127.0.0.1:`port` is accepted now.
    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0
    }
}

/// The python supervisor the test servers (nginx, redis-server) run under: it unblocks signals (the mask is
/// inherited from the spawning thread), starts the command in argv[2:], and kills it on stdin EOF (the test process
/// closing its end, or dying), on SIGTERM (`stop(_:)`), or after argv[1] seconds.
///
/// It must not close the descriptors it inherited: one is the socket through which Foundation's `Process` learns
/// that it exited (its end closing), and Foundation then waits for the exit on the one thread that serves every
/// `Process` of the test process.
enum ServerSupervisor {
    static let script = """
    import signal, subprocess, sys, threading
    stopping = threading.Event()
    child = None
    def stop(*_):
        stopping.set()
        if child is not None:
            child.kill()
    signal.signal(signal.SIGTERM, stop)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL)
    if stopping.is_set():
        child.kill()
    def watch():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except Exception:
            pass
        child.kill()
    threading.Thread(target=watch, daemon=True).start()
    try:
        child.wait(timeout=float(sys.argv[1]))
    except subprocess.TimeoutExpired:
        child.kill()
    child.wait()
    """

    /// Stops a supervised server at once, whatever else holds its stdin: SIGTERM makes the supervisor kill the
    /// server and exit; closing `lifeline` is what ends it should the signal be missed.
    static func stop(_ process: Process, lifeline: Pipe) {
        try? lifeline.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

import Foundation

/// Debian's nginx, unpacked (not installed: no service) by `.ci/run` or Benchmarks/run.sh, serving HTTPS
/// with HTTP/2 on 127.0.0.1 from a temporary directory. Found through `OD_NGINX` (the binary's path).
///
/// It runs in the foreground (`master_process off`) under a small Python supervisor that kills it when the
/// test process closes the supervisor's stdin (`stop()`, or the test process ending however it ends) or after
/// 120 s. (`timeout` would not do: a child of a dispatch thread inherits its blocked signals, SIGALRM and
/// SIGTERM included.)
final class NginxServer: @unchecked Sendable {  // immutable after init
    static var binary: String? {
        guard let path = ProcessInfo.processInfo.environment["OD_NGINX"], FileManager.default.isExecutableFile(atPath: path) else {
            return nil
        }
        return path
    }

    let port: Int
    let directory: URL
    let accessLog: URL
    private let process: Process
    private let lifeline = Pipe()

    /// Unblocks signals (the mask is inherited from the spawning thread), starts nginx, and kills it on stdin
    /// EOF or after argv[1] seconds.
    private static let supervisor = """
    import signal, subprocess, sys, threading
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL)
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

    /// Serves `files` (name -> bytes) over HTTPS with HTTP/2, with `certificate`/`key`.
    init(binary: String, certificate: String, key: String, files: [String: Data]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("od-nginx-\(UUID().uuidString)")
        let www = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: www.appendingPathComponent(name)) }
        accessLog = directory.appendingPathComponent("access.log")
        port = try Self.freePort()
        let d = directory.path
        let configuration = """
        worker_processes 1;
        daemon off;
        master_process off;
        pid \(d)/nginx.pid;
        error_log \(d)/error.log warn;
        events { worker_connections 256; }
        http {
            default_type application/octet-stream;
            log_format connections '$connection $server_protocol $status $request_uri';
            access_log \(accessLog.path) connections;
            client_body_temp_path \(d)/tmp/body;
            proxy_temp_path \(d)/tmp/proxy;
            fastcgi_temp_path \(d)/tmp/fastcgi;
            uwsgi_temp_path \(d)/tmp/uwsgi;
            scgi_temp_path \(d)/tmp/scgi;
            keepalive_requests 100000;
            server {
                listen 127.0.0.1:\(port) ssl http2;
                ssl_certificate \(certificate);
                ssl_certificate_key \(key);
                root \(www.path);
            }
        }
        """
        let conf = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: conf, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.supervisor, "120", binary, "-p", d, "-c", conf.path, "-e", "\(d)/error.log"]
        process.standardInput = lifeline
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard Self.waitForListener(port: port, process: process) else {
            stop()
            let log = (try? String(contentsOfFile: "\(d)/error.log", encoding: .utf8)) ?? ""
            throw TestCertificateFailure(message: "nginx did not start: \(log.suffix(500))")
        }
    }

    func url(_ path: String) -> URL { URL(string: "https://127.0.0.1:\(port)\(path)")! }

    /// Access-log lines: "<connection serial> <protocol> <status> <uri>".
    var logLines: [[Substring]] {
        let text = (try? String(contentsOf: accessLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { $0.split(separator: " ") }
    }

    func stop() {
        try? lifeline.fileHandleForWriting.close()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port the kernel picked and released (nginx binds it a moment later).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestCertificateFailure(message: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestCertificateFailure(message: "bind() failed") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Connects until nginx accepts (a start-up wait, bounded at 10 s; not a timing assertion).
    private static func waitForListener(port: Int, process: Process) -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if connected == 0 { return true }
            usleep(50_000)
        }
        return false
    }
}

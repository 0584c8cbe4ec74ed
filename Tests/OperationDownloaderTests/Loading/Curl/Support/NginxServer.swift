import Foundation
import TestRequirements

/// Debian's nginx, unpacked (not installed: no service) by `.ci/run` or Benchmarks/run.sh, serving HTTPS
/// with HTTP/2 on 127.0.0.1 from a temporary directory. Found through `OD_NGINX` (the binary's path).
///
/// It runs in the foreground (`master_process off`) under a small Python supervisor (`ServerSupervisor`) that
/// kills it on `stop()`, when the test process ends however it ends (the supervisor's stdin closes), or after
/// 600 s, a bound far past any test on a loaded machine. (`timeout` would not do: a child of a dispatch thread
/// inherits its blocked signals, SIGALRM and SIGTERM included.)
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


    /// Serves `files` (name -> bytes) over HTTPS with HTTP/2, with `certificate`/`key`.
    init(binary: String, certificate: String, key: String, files: [String: Data]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("od-nginx-\(UUID().uuidString)")
        let www = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: www.appendingPathComponent(name)) }
        accessLog = directory.appendingPathComponent("access.log")
        port = try LoopbackPort.free()
        let d = directory.path
        let pidFile = directory.appendingPathComponent("nginx.pid")
        let configuration = """
        worker_processes 1;
        daemon off;
        master_process off;
        pid \(pidFile.path);
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
        process.arguments = ["python3", "-c", ServerSupervisor.script, "600", binary, "-p", d, "-c", conf.path, "-e", "\(d)/error.log"]
        process.standardInput = lifeline
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        guard LoopbackPort.waitForServer(port: port, process: process, pidFile: pidFile) else {
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
        ServerSupervisor.stop(process, lifeline: lifeline)
        try? FileManager.default.removeItem(at: directory)
    }
}

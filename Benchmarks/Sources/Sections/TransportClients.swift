import Foundation
import OperationDownloader

/// The clients the transport sections compare, over plain HTTP/1.1 and over HTTPS (HTTP/2 where the client
/// speaks it: curl and the curl transport do, URLSession on Linux does too through its libcurl).
enum TransportClient: String, CaseIterable {
    case curl
    case curlTransport = "curl_transport"
    case curlOperationProbe = "curl_operation_probe"
    case curlOperationCallbackProbe = "curl_operation_callback_probe"
    case downloaderCurl = "downloader_curl"
    case urlSession = "urlsession"
    case downloaderURLSession = "downloader_urlsession"
    /// The downloader on the configuration's default transport (curl on Linux where libcurl loads): only the
    /// crash count section runs it (HTTPSCrashBenchmark).
    case downloaderDefault = "downloader_default"

    /// The clients the throughput and instructions sections compare.
    static let compared: [TransportClient] = allCases.filter { $0 != .downloaderDefault }

    var label: String {
        switch self {
        case .curl: return "curl --parallel --parallel-max 6"
        case .curlTransport: return "bare curl transport (minimal client)"
        case .curlOperationProbe: return "bare Operation per URL on the curl transport (no package code)"
        case .curlOperationCallbackProbe: return "bare Operation per URL on the curl transport, completions on a callback queue (no package code)"
        case .downloaderCurl: return "ImageDownloader on the curl transport (decode off)"
        case .urlSession: return "raw URLSession tasks"
        case .downloaderURLSession: return "ImageDownloader on URLSession (decode off)"
        case .downloaderDefault: return "ImageDownloader on the default transport (decode off)"
        }
    }

    var workload: TransportWorkload? {
        switch self {
        case .curl: return nil
        case .curlTransport: return .curlTransport
        case .curlOperationProbe: return .curlOperationProbe
        case .curlOperationCallbackProbe: return .curlOperationCallbackProbe
        case .downloaderCurl: return .downloaderCurl
        case .urlSession: return .urlSession
        case .downloaderURLSession: return .downloaderURLSession
        case .downloaderDefault: return .downloaderDefault
        }
    }

    /// URLSession on Linux trusts only the system bundle: over HTTPS it runs where the test CA is added to it.
    var needsSystemTrust: Bool {
        self == .urlSession || self == .downloaderURLSession
            || (self == .downloaderDefault && ImageDownloaderTransport.platformDefault == .urlSession)
    }
}

/// Where the clients download from: plain HTTP or the TLS listener.
struct TransportEndpoint {
    let name: String
    /// "" for HTTP/1.1, "_https" for the HTTPS/HTTP/2 variant of every key.
    let keySuffix: String
    let baseURL: String
    let tls: RunContext.TLSEndpoint?

    static func all(_ context: RunContext) -> [TransportEndpoint] {
        var endpoints = [TransportEndpoint(name: "HTTP/1.1", keySuffix: "", baseURL: context.baseURL, tls: nil)]
        if let tls = context.tls {
            endpoints.append(TransportEndpoint(name: "HTTPS (HTTP/2)", keySuffix: "_https", baseURL: tls.baseURL, tls: tls))
        }
        return endpoints
    }

    /// Why `client` cannot run against this endpoint here, or nil.
    func unavailableReason(_ client: TransportClient) -> String? {
        guard let tls, client.needsSystemTrust, tls.caBundle == nil else { return nil }
        return "URLSession trusts only the system bundle, and no private mount namespace (unshare -m) can add the test CA here"
    }

    /// The child's command line: the workload, or curl with a config of `count` URLs; wrapped, for URLSession
    /// over HTTPS, in a private mount namespace whose system CA bundle also holds the test CA.
    func command(_ client: TransportClient, count: Int, context: RunContext, wrapper: [String] = []) throws -> [String] {
        var command: [String]
        if let workload = client.workload {
            command = [context.executable, "transport-child", workload.rawValue, "--base-url", baseURL,
                       "--count", String(count), "--dir", context.fixtures.directory.path]
            if let tls { command += ["--ca-file", tls.caFile] }
        } else {
            command = ["curl", "--silent", "--show-error", "--fail", "--no-progress-meter", "--parallel", "--parallel-max", "6",
                       "-H", "Accept: image/*,*/*;q=0.8", "-K", try curlConfig(count: count, context: context).path]
            if let tls { command += ["--cacert", tls.caFile] }
        }
        command = wrapper + command
        if let tls, client.needsSystemTrust, let bundle = tls.caBundle {
            command = ["unshare", "-m", "sh", "-c", "mount --bind \"$0\" /etc/ssl/certs/ca-certificates.crt && exec \"$@\"",
                       bundle] + command
        }
        return command
    }

    /// The same distinct URLs the Swift clients download (small JPEGs with ?n=).
    private func curlConfig(count: Int, context: RunContext) throws -> URL {
        let small = max(1, context.fixtures.smallCount(format: "jpg"))
        let file = context.fixtures.directory.appendingPathComponent("transport-curl\(keySuffix)-\(count).conf")
        let text = (0..<count).map {
            "url = \"\(baseURL)/\(Fixtures.smallPath($0 % small, format: "jpg"))?n=\($0)\"\noutput = \"/dev/null\"\n"
        }.joined()
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }
}

/// One child run of a transport client: its cost, or why it could not run.
enum TransportRun {
    case measured(ChildCost)
    /// The client cannot run here (exit 4: e.g. the downloader on curl before it is wired); not a failure.
    case unavailable(String)

    /// A child killed by a signal (exit status 128 + n).
    struct Crash: Error, CustomStringConvertible {
        let status: Int32
        var description: String { "exit \(status): signal \(status - 128)" }
    }

    /// Runs `command` (made by `TransportEndpoint.command` for `client`): curl's cost is its whole process
    /// (wait4 rusage); a Swift client's is both its own timing of the downloads and its whole process.
    static func run(_ command: [String], client: TransportClient) throws -> TransportRun {
        struct Report: Decodable {
            var seconds: Double?
            var cpu_seconds: Double?
            var unavailable: String?
        }
        let outcome = try ChildProcess.run(command, captureOutput: client != .curl)
        if client == .curl {
            guard outcome.status == 0 else { throw BenchmarkError.tool("curl exited with \(outcome.status)") }
            return .measured(ChildCost(own: nil, process: outcome.cost))
        }
        let line = outcome.output.split(separator: "\n").last.map(String.init) ?? ""
        let report = try? JSONDecoder().decode(Report.self, from: Data(line.utf8))
        if outcome.status == 4, let reason = report?.unavailable { return .unavailable(reason) }
        if outcome.status > 128 { throw Crash(status: outcome.status) }
        guard outcome.status == 0, let report, let seconds = report.seconds, let cpu = report.cpu_seconds else {
            throw BenchmarkError.failed("\(client.rawValue): exit \(outcome.status): \(line)")
        }
        return .measured(ChildCost(own: Cost(wall: seconds, cpu: cpu), process: outcome.cost))
    }
}

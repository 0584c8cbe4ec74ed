import Foundation
@_spi(Benchmarks) import OperationDownloader

/// The clients of the transport sections, each run in a child process of its own:
/// `Benchmarks transport-child NAME --base-url URL --count N --dir DIR [--ca-file FILE]`.
/// Over https, `--ca-file` is the test CA the curl clients are given; URLSession (which reads only the system
/// store on Linux) runs in a mount namespace where the CA is added to the system bundle (TransportBenchmark).
enum TransportWorkload: String, CaseIterable {
    /// The bare curl transport with a minimal client (no operation, no downloader).
    case curlTransport = "curl-transport"
    /// The bare curl transport, one bare `Operation` per URL on an `OperationQueue` (SPEC §6.2's shape, no
    /// package code): what the design's Operation machinery alone costs on curl.
    case curlOperationProbe = "curl-operation-probe"
    /// As `curlOperationProbe`, each completion also handed to a serial callback queue (§6.9).
    case curlOperationCallbackProbe = "curl-operation-callback-probe"
    /// ImageDownloader with `configuration.transport = .curl`, decode off.
    case downloaderCurl = "downloader-curl"
    /// Raw URLSession data tasks with the downloader's session settings.
    case urlSession = "urlsession"
    /// ImageDownloader on URLSession, decode off.
    case downloaderURLSession = "downloader-urlsession"
    /// ImageDownloader on the configuration's default transport (curl on Linux where libcurl loads), decode off.
    case downloaderDefault = "downloader-default"

    /// Runs the workload; prints one JSON line as ChildWorkload does and returns the exit code (4: the
    /// client cannot run here, e.g. the downloader on curl before it is wired; the section says "not measured").
    func run(baseURL: String, count: Int, smallAvailable: Int, caFile: String?) -> Int32 {
        let small = max(1, smallAvailable)
        // Distinct URLs (a query beyond the available files), so no memory-cache hit ever answers a download.
        let urls = (0..<count).compactMap { URL(string: "\(baseURL)/\(Fixtures.smallPath($0 % small, format: "jpg"))?n=\($0)") }
        guard urls.count == count else {
            print("{\"error\": \"bad base URL\"}")
            return 2
        }
        let start = Clock.wall()
        let cpuStart = Clock.processCPU()
        var failures: Int?
        var firstError: String?
        switch self {
        case .curlTransport, .curlOperationProbe, .curlOperationCallbackProbe:
            if let reason = CurlTransportProbe.unavailableReason {
                print("{\"unavailable\": \(JSONValue.string(reason).serialized())}")
                return 4
            }
            let headers = RawURLSessionClient.request(for: urls[0]).allHTTPHeaderFields ?? [:]
            let scheduling: CurlTransportProbe.Scheduling = switch self {
            case .curlOperationProbe: .operationPerURL(callbackQueue: false)
            case .curlOperationCallbackProbe: .operationPerURL(callbackQueue: true)
            default: .direct
            }
            let outcome = CurlTransportProbe.download(
                urls, concurrency: 6, headers: headers, caFile: caFile, scheduling: scheduling)
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .downloaderCurl, .downloaderURLSession:
            let curl = self == .downloaderCurl
            if curl, !Self.downloaderRunsOnCurl(urls[0], caFile: caFile) {
                print("{\"unavailable\": \"the downloader does not run on the curl transport yet\"}")
                return 4
            }
            let outcome = DownloaderClient.download(urls, options: [.avoidDecodeImage]) { configuration in
                if curl {
                    configuration.transport = .curl
                    configuration.tls = ImageDownloaderTLSConfiguration(caFile: caFile)
                }
            }
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .downloaderDefault:
            // The transport a configuration that names none gets (the CA file is the curl transport's; URLSession
            // runs where the test CA is in the system bundle).
            let outcome = DownloaderClient.download(urls, options: [.avoidDecodeImage], transport: nil) { configuration in
                configuration.tls = ImageDownloaderTLSConfiguration(caFile: caFile)
            }
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .urlSession:
            failures = RawURLSessionClient().download(urls, concurrency: 6)
        }
        return ChildWorkload.report(failures: failures, firstError: firstError, start: start, cpuStart: cpuStart)
    }

    /// Whether a downloader configured with `.curl` really runs on libcurl: only then do its metrics name the
    /// HTTP version (URLSession's are nil), so a build whose downloader ignores `transport` is never reported
    /// as the curl transport. One download with a downloader of its own, before the measurement.
    static func downloaderRunsOnCurl(_ url: URL, caFile: String?) -> Bool {
        var configuration = ImageDownloaderConfiguration()
        configuration.transport = .curl
        configuration.tls = ImageDownloaderTLSConfiguration(caFile: caFile)
        let downloader = ImageDownloader(configuration: configuration)
        defer { downloader.invalidate(cancelPendingOperations: true) }
        let done = DispatchSemaphore(value: 0)
        let token = downloader.downloadImage(url, options: [.avoidDecodeImage], completed: { _, _, _, finished in
            if finished { done.signal() }
        })
        guard done.wait(timeout: .now() + 30) == .success else { return false }
        return token?.metrics?.httpVersion != nil
    }
}

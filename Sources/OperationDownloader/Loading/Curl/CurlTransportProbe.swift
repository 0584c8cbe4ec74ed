import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// For the benchmarks only (`@_spi(Benchmarks)`): the bare curl transport with a minimal client, so that
/// its cost per download can be compared with the `curl` command's and with the whole downloader's.
@_spi(Benchmarks)
public enum CurlTransportProbe {
    /// How a batch went.
    public struct Outcome: Sendable {
        public var failures: Int
        public var firstError: String?
    }

    /// Why the curl transport cannot run here, or nil.
    public static var unavailableReason: String? { CurlAvailability.unavailableReason }

    /// Downloads every URL through one curl transport, `concurrency` at a time (a new transfer starts when
    /// one completes, as the raw URLSession client of the benchmarks does), each body collected and dropped.
    /// `caFile` is the TLS configuration's CA file. nil when the batch did not finish within `timeout`.
    public static func download(
        _ urls: [URL], concurrency: Int, headers: [String: String], caFile: String? = nil, timeout: TimeInterval = 300
    ) -> Outcome? {
        var settings = CurlTransportSettings()
        settings.maximumConnectionsPerHost = concurrency
        settings.tls = ImageDownloaderTLSConfiguration(caFile: caFile)
        let transport = CurlTransport(settings: settings)
        defer { transport.invalidate(cancellingTransfers: true) }
        let batch = ProbeBatch(urls: urls, headers: headers, transport: transport)
        return batch.run(concurrency: concurrency, timeout: timeout)
    }
}

/// Runs the probe's batch: starts transfers, counts completions. One client object per transfer, as the
/// downloader has one operation per transfer.
private final class ProbeBatch: @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private let transport: CurlTransport
    private let headers: [String: String]
    private var pending: [URL]
    private var remaining: Int
    private var failures = 0
    private var firstError: String?
    private let done = DispatchSemaphore(value: 0)

    init(urls: [URL], headers: [String: String], transport: CurlTransport) {
        self.transport = transport
        self.headers = headers
        pending = urls.reversed()
        remaining = urls.count
    }

    func run(concurrency: Int, timeout: TimeInterval) -> CurlTransportProbe.Outcome? {
        guard remaining > 0 else { return CurlTransportProbe.Outcome(failures: 0) }
        let first: [URL] = lock.withLock {
            var started: [URL] = []
            while started.count < concurrency, let next = pending.popLast() { started.append(next) }
            return started
        }
        for url in first { start(url) }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return lock.withLock { CurlTransportProbe.Outcome(failures: failures, firstError: firstError) }
    }

    private func start(_ url: URL) {
        // As the downloader builds its requests: headers assigned at once (URLRequest.setValue is costly).
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 15)
        request.allHTTPHeaderFields = headers
        transport.makeTransfer(TransferRequest(urlRequest: request), client: ProbeClient(batch: self)).resume()
    }

    func finished(_ error: String?) {
        let (next, last): (URL?, Bool) = lock.withLock {
            if let error {
                failures += 1
                if firstError == nil { firstError = error }
            }
            remaining -= 1
            return (pending.popLast(), remaining == 0)
        }
        if let next { start(next) }
        if last { done.signal() }
    }
}

/// One transfer's client: collects the body (reserving the announced length, as the operation does) and
/// drops it at the end.
private final class ProbeClient: TransferClient, @unchecked Sendable {  // events of one transfer are serial (seam contract)
    private let batch: ProbeBatch
    private var body = Data()
    private var status = 0

    init(batch: ProbeBatch) {
        self.batch = batch
    }

    func transfer(_ transfer: any TransportTransfer, didReceive response: TransportResponse) {
        status = response.statusCode ?? 0
        let expected = response.expectedContentLength
        body = Data()
        if expected > 0 { body.reserveCapacity(Int(min(expected, 8 << 20))) }
    }

    func transfer(_ transfer: any TransportTransfer, didReceive data: Data) {
        body.append(data)
    }

    func transfer(_ transfer: any TransportTransfer, didReceiveBytes bytes: UnsafeRawBufferPointer) {
        body.append(contentsOf: bytes)
    }

    func transfer(_ transfer: any TransportTransfer, willRedirect response: HTTPURLResponse, to request: URLRequest) -> URLRequest? {
        request
    }

    func transfer(_ transfer: any TransportTransfer, didReceive challenge: TransferChallenge) -> URLCredential? {
        nil
    }

    func transfer(_ transfer: any TransportTransfer, didCompleteWith error: (any Error)?, metrics: TransferMetrics) {
        let failed = error != nil || status != 200 || body.isEmpty
        body = Data()
        batch.finished(failed ? (error.map { "\($0)" } ?? "status \(status)") : nil)
    }
}

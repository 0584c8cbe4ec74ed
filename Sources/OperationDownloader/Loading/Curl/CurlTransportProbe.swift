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

    /// How the probe starts its transfers.
    public enum Scheduling: Sendable {
        /// A new transfer starts from the completion of the last one, on the transport's thread: no hand-off.
        case direct
        /// SPEC §6.2's shape without any of the package: one bare asynchronous `Operation` per URL on an
        /// `OperationQueue` (`concurrency` at a time, every operation added at once), whose `start()` begins the
        /// transfer and whose transfer's end finishes it. With `callbackQueue`, each completion is also handed
        /// to a serial queue (§6.9's callback queue) before it is counted. No callers, notifications, timeouts
        /// or coalescing: what the platform's Operation machinery alone costs on this transport.
        case operationPerURL(callbackQueue: Bool)
    }

    /// Why the curl transport cannot run here, or nil.
    public static var unavailableReason: String? { CurlAvailability.unavailableReason }

    /// Downloads every URL through one curl transport, `concurrency` at a time (a new transfer starts when
    /// one completes, as the raw URLSession client of the benchmarks does), each body collected and dropped.
    /// `caFile` is the TLS configuration's CA file. nil when the batch did not finish within `timeout`.
    public static func download(
        _ urls: [URL], concurrency: Int, headers: [String: String], caFile: String? = nil,
        scheduling: Scheduling = .direct, timeout: TimeInterval = 300
    ) -> Outcome? {
        var settings = CurlTransportSettings()
        settings.maximumConnectionsPerHost = concurrency
        settings.tls = ImageDownloaderTLSConfiguration(caFile: caFile)
        let transport = CurlTransport(settings: settings)
        defer { transport.invalidate(cancellingTransfers: true) }
        let batch = ProbeBatch(urls: urls, headers: headers, transport: transport)
        switch scheduling {
        case .direct:
            return batch.run(concurrency: concurrency, timeout: timeout)
        case .operationPerURL(let callbackQueue):
            return batch.runOperations(
                concurrency: concurrency, callbackQueue: callbackQueue ? DispatchQueue(label: "probe.callbacks") : nil,
                timeout: timeout)
        }
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

    /// Every URL as an operation of its own on one queue; `pending` is not used.
    func runOperations(concurrency: Int, callbackQueue: DispatchQueue?, timeout: TimeInterval) -> CurlTransportProbe.Outcome? {
        let urls: [URL] = lock.withLock {
            defer { pending = [] }
            return pending.reversed()
        }
        guard !urls.isEmpty else { return CurlTransportProbe.Outcome(failures: 0) }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = concurrency
        queue.addOperations(urls.map { ProbeOperation(url: $0, batch: self, callbackQueue: callbackQueue) }, waitUntilFinished: false)
        guard done.wait(timeout: .now() + timeout) == .success else {
            queue.cancelAllOperations()
            return nil
        }
        return lock.withLock { CurlTransportProbe.Outcome(failures: failures, firstError: firstError) }
    }

    /// `operation`: the probe operation this transfer belongs to, told of its end instead of the batch.
    fileprivate func start(_ url: URL, for operation: ProbeOperation? = nil) {
        // As the downloader builds its requests: headers assigned at once (URLRequest.setValue is costly).
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 15)
        request.allHTTPHeaderFields = headers
        let client = ProbeClient(batch: self, operation: operation)
        transport.makeTransfer(TransferRequest(urlRequest: request), client: client).resume()
    }

    /// Counts one transfer's end (the operation variant: the queue starts the next).
    fileprivate func counted(_ error: String?) {
        if count(error, takingNext: false).last { done.signal() }
    }

    func finished(_ error: String?) {
        let (next, last) = count(error, takingNext: true)
        if let next { start(next) }
        if last { done.signal() }
    }

    /// One lock section per end: the count, and the next URL to start when the batch starts them itself.
    private func count(_ error: String?, takingNext: Bool) -> (next: URL?, last: Bool) {
        lock.withLock {
            if let error {
                failures += 1
                if firstError == nil { firstError = error }
            }
            remaining -= 1
            return (takingNext ? pending.popLast() : nil, remaining == 0)
        }
    }
}

/// One transfer's client: collects the body (reserving the announced length, as the operation does) and
/// drops it at the end.
private final class ProbeClient: TransferClient, @unchecked Sendable {  // events of one transfer are serial (seam contract)
    private let batch: ProbeBatch
    private let operation: ProbeOperation?
    private var body = Data()
    private var status = 0

    /// No closure per transfer: the direct probe is the bare transport's baseline, and stays as lean as it was.
    init(batch: ProbeBatch, operation: ProbeOperation?) {
        self.batch = batch
        self.operation = operation
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
        let message = failed ? (error.map { "\($0)" } ?? "status \(status)") : nil
        if let operation { operation.transferEnded(message) } else { batch.finished(message) }
    }
}

/// A bare asynchronous operation around one transfer (as the URLSession probe of the benchmarks has one task).
fileprivate final class ProbeOperation: BareAsyncOperation, @unchecked Sendable {  // immutable after init
    private let url: URL
    private let batch: ProbeBatch
    private let callbackQueue: DispatchQueue?

    init(url: URL, batch: ProbeBatch, callbackQueue: DispatchQueue?) {
        self.url = url
        self.batch = batch
        self.callbackQueue = callbackQueue
    }

    override func begin() {
        batch.start(url, for: self)
    }

    /// The transfer's end: counted (through the callback queue, if any), then the operation finishes.
    func transferEnded(_ error: String?) {
        if let callbackQueue {
            callbackQueue.async { [batch] in batch.counted(error) }
        } else {
            batch.counted(error)
        }
        finish()
    }
}

import Foundation
@_spi(Benchmarks) import OperationDownloader
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The platform's cost of the design Docs/Downloader.md describes, without any of the package: one asynchronous
/// `Operation` per download on an `OperationQueue` (`concurrency` at a time, every operation added at once, as
/// the downloader client does), each running one data task of a shared session whose delegate collects the
/// body on a serial queue. No callbacks, notifications, coalescing or timeouts. The same requests as
/// `RawURLSessionClient`. Comparing the downloader with this separates the package's own overhead from what
/// an Operation per download costs on corelibs Foundation.
final class OperationProbeClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private var operations: [Int: DownloadOperation] = [:]
    private var buffers: [Int: Data] = [:]
    private var failures = 0
    private var remaining = 0
    private let done = DispatchSemaphore(value: 0)

    /// Downloads every URL; returns how many failed (nil when it timed out).
    func download(_ urls: [URL], concurrency: Int, timeout: TimeInterval = 300) -> Int? {
        let session = RawURLSessionClient.makeSession(delegate: self, concurrency: concurrency)
        defer { session.invalidateAndCancel() }
        guard !urls.isEmpty else { return 0 }
        lock.withLock {
            remaining = urls.count
            failures = 0
        }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = concurrency
        for url in urls {
            queue.addOperation(DownloadOperation(url: url, session: session, client: self))
        }
        let finished = done.wait(timeout: .now() + timeout) == .success
        return finished ? lock.withLock { failures } : nil
    }

    fileprivate func register(_ task: URLSessionTask, for operation: DownloadOperation) {
        lock.withLock { operations[task.taskIdentifier] = operation }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { buffers[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? 0
        let (operation, allDone): (DownloadOperation?, Bool) = lock.withLock {
            let body = buffers.removeValue(forKey: task.taskIdentifier)
            if error != nil || status != 200 || (body?.isEmpty ?? true) { failures += 1 }
            remaining -= 1
            return (operations.removeValue(forKey: task.taskIdentifier), remaining == 0)
        }
        operation?.finish()
        if allDone { done.signal() }
    }
}

/// One data task per operation (the manual KVO is `BareAsyncOperation`'s).
private final class DownloadOperation: BareAsyncOperation, @unchecked Sendable {  // immutable after init; `client` is weak
    private let url: URL
    private let session: URLSession
    private weak var client: OperationProbeClient?

    init(url: URL, session: URLSession, client: OperationProbeClient) {
        self.url = url
        self.session = session
        self.client = client
    }

    override func begin() {
        let task = session.dataTask(with: RawURLSessionClient.request(for: url))
        client?.register(task, for: self)
        task.resume()
    }
}

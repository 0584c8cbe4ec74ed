import Foundation
import OperationDownloader
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The baseline for the downloader: plain URLSession data tasks with the downloader's session settings
/// (delegate callbacks on a serial queue, URL cache and cookies off, the same headers and timeout) and the
/// same concurrency (a new task starts when one completes, `concurrency` in flight). Bodies are collected
/// per task as the operation does, and dropped.
final class RawURLSessionClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private var session: URLSession?
    private var pending: [URL] = []
    private var buffers: [Int: Data] = [:]
    private var failures = 0
    private var remaining = 0
    private let done = DispatchSemaphore(value: 0)

    /// Downloads every URL, `concurrency` at a time; returns how many failed (nil when it timed out).
    func download(_ urls: [URL], concurrency: Int, timeout: TimeInterval = 300) -> Int? {
        let session = Self.makeSession(delegate: self, concurrency: concurrency)
        let first: [URL] = lock.withLock {
            self.session = session
            pending = Array(urls.reversed())
            remaining = urls.count
            failures = 0
            var started: [URL] = []
            while started.count < concurrency, let next = pending.popLast() { started.append(next) }
            return started
        }
        guard !urls.isEmpty else { return 0 }
        for url in first { start(url, on: session) }
        let finished = done.wait(timeout: .now() + timeout) == .success
        session.invalidateAndCancel()
        return finished ? lock.withLock { failures } : nil
    }

    private func start(_ url: URL, on session: URLSession) {
        session.dataTask(with: Self.request(for: url)).resume()
    }

    /// A session set up as `ImageDownloader.init` sets up its own, with the delegate on a serial queue.
    static func makeSession(delegate: any URLSessionDelegate, concurrency: Int) -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.httpCookieAcceptPolicy = .never
        configuration.timeoutIntervalForRequest = 15
        configuration.httpMaximumConnectionsPerHost = max(configuration.httpMaximumConnectionsPerHost, concurrency)
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
    }

    /// The request a user would write for `url`, with the downloader's default headers.
    static func request(for url: URL) -> URLRequest {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 15)
        request.setValue("image/*,*/*;q=0.8", forHTTPHeaderField: "Accept")
        request.setValue(ImageDownloader.defaultUserAgent, forHTTPHeaderField: "User-Agent")
        return request
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { buffers[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? 0
        let (next, allDone): (URL?, Bool) = lock.withLock {
            let body = buffers.removeValue(forKey: task.taskIdentifier)
            if error != nil || status != 200 || (body?.isEmpty ?? true) { failures += 1 }
            remaining -= 1
            return (pending.popLast(), remaining == 0)
        }
        if let next { start(next, on: session) }
        if allDone { done.signal() }
    }
}

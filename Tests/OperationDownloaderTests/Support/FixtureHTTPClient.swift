import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one plain URLSession request produced, as seen through the delegate.
struct FixtureFetchResult: Sendable {
    /// The last response received (a 401 before an authenticated retry is replaced by the retry's).
    var response: HTTPURLResponse?
    /// Body bytes of the last response.
    var data = Data()
    /// Size of each `didReceive data` call, in order (the drip tests look at the shape).
    var chunkSizes: [Int] = []
    /// Statuses of every response received, in order (e.g. [401, 200] for an authenticated retry).
    var statuses: [Int] = []
    var error: URLError?

    var status: Int? { response?.statusCode }
}

/// A delegate-based URLSession client for testing the fixture server with plain Foundation.
///
/// Delegate-based on purpose: on Linux the completion-handler API hangs on a Basic 401 challenge.
/// Challenges get the given credential once (`previousFailureCount == 0`) and are otherwise cancelled;
/// never default handling, which hangs forever on Linux. No cache, no cookie storage.
final class FixtureHTTPClient: Sendable {
    static let shared = FixtureHTTPClient()

    private let router: Router
    private let session: URLSession

    /// `shared` lives as long as the test process. A test that needs connections of its own (the shared
    /// client's can all be busy with other suites' held or dripping requests) makes one and calls `invalidate()`.
    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.timeoutIntervalForRequest = 120
        router = Router()
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: nil)
    }

    /// Ends the session once its tasks are done (never called on `shared`).
    func invalidate() {
        session.finishTasksAndInvalidate()
    }

    /// Fetches `url` with extra headers.
    /// - Parameters:
    ///   - credential: answers a Basic challenge once.
    ///   - cancelAfterBytes: cancels the task once this many body bytes arrived (a client that goes away).
    ///   - timeout: the request's idle timeout in whole seconds (Linux truncates fractions). A bound against hangs
    ///     only: when it fires while a redirect decision waits in the delegate queue (a loaded machine), the
    ///     decision's late answer traps inside corelibs Foundation ("Received callback for HTTP redirection, but
    ///     we're not waiting for it"), ending the whole test process.
    ///   - followsRedirects: false delivers a 3xx as the response (fetch's `redirect: "manual"`).
    func fetch(
        _ url: URL, method: String = "GET", headers: [String: String] = [:], credential: URLCredential? = nil,
        cancelAfterBytes: Int? = nil, timeout: TimeInterval = 120, followsRedirects: Bool = true
    ) async -> FixtureFetchResult {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = timeout
        for (field, value) in headers {
            request.setValue(value, forHTTPHeaderField: field)
        }
        return await withCheckedContinuation { continuation in
            let task = session.dataTask(with: request)
            router.register(task.taskIdentifier, credential: credential, cancelAfterBytes: cancelAfterBytes,
                            followsRedirects: followsRedirects, continuation: continuation)
            task.resume()
        }
    }
}

/// Routes delegate callbacks to the pending fetch that owns the task.
private final class Router: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `pending` guarded by `lock`
    private struct Pending {
        var result = FixtureFetchResult()
        let credential: URLCredential?
        let cancelAfterBytes: Int?
        let followsRedirects: Bool
        var cancelled = false
        let continuation: CheckedContinuation<FixtureFetchResult, Never>
    }

    private let lock = NSLock()
    private var pending: [Int: Pending] = [:]

    func register(
        _ id: Int, credential: URLCredential?, cancelAfterBytes: Int?, followsRedirects: Bool,
        continuation: CheckedContinuation<FixtureFetchResult, Never>
    ) {
        lock.lock()
        defer { lock.unlock() }
        pending[id] = Pending(credential: credential, cancelAfterBytes: cancelAfterBytes, followsRedirects: followsRedirects,
                              continuation: continuation)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        lock.lock()
        let follows = pending[task.taskIdentifier]?.followsRedirects ?? true
        lock.unlock()
        completionHandler(follows ? request : nil)
    }

    private func update(_ task: URLSessionTask, _ body: (inout Pending) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if var entry = pending[task.taskIdentifier] {
            body(&entry)
            pending[task.taskIdentifier] = entry
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        update(dataTask) { entry in
            let http = response as? HTTPURLResponse
            entry.result.response = http
            entry.result.data = Data()
            entry.result.chunkSizes = []
            entry.result.statuses.append(http?.statusCode ?? -1)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var shouldCancel = false
        update(dataTask) { entry in
            // Data keeps arriving after cancel() on Linux: drop it.
            guard !entry.cancelled else { return }
            entry.result.data.append(data)
            entry.result.chunkSizes.append(data.count)
            if let limit = entry.cancelAfterBytes, entry.result.data.count >= limit {
                entry.cancelled = true
                shouldCancel = true
            }
        }
        if shouldCancel {
            dataTask.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        lock.lock()
        let credential = pending[task.taskIdentifier]?.credential
        lock.unlock()
        if let credential, challenge.previousFailureCount == 0 {
            completionHandler(.useCredential, credential)
        } else {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let entry = pending.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        guard var entry else { return }
        if let error {
            entry.result.error = (error as? URLError) ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
        }
        entry.continuation.resume(returning: entry.result)
    }
}

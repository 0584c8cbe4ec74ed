import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing

/// A `TransferClient` that records every event of one transfer, checks the seam's threading contract
/// (one event at a time; none after `cancel()` returned), and answers redirects and challenges as told.
final class RecordingTransferClient: TransferClient, @unchecked Sendable {  // `lock` guards every var
    enum Event: Equatable {
        case response(Int)
        case data(Int)
        case redirect(from: Int, to: String)
        case challenge(TransferChallenge)
        case complete(URLError.Code?)
    }

    private let lock = NSLock()
    private var recorded: [Event] = []
    private var bodyBytes = Data()
    private var bodyCount = 0
    private var keepsBody: Bool
    private var responses: [HTTPURLResponse] = []
    private var finalError: (any Error)?
    private var finalMetrics: TransferMetrics?
    private var completions = 0
    private var inEvent = 0
    private var overlaps = 0
    private var cancelReturned = false
    private var lateEvents: [String] = []
    private var eventThreads = Set<String>()
    private let finished = Completion()

    /// The redirect answer: the proposed request (follow), another, or nil (the 3xx is final).
    var redirectDecision: @Sendable (HTTPURLResponse, URLRequest) -> URLRequest? = { _, proposed in proposed }
    /// The credential for a challenge (nil refuses).
    var credential: @Sendable (TransferChallenge) -> URLCredential? = { _ in nil }
    /// Called inside each data event, after recording it (e.g. to cancel or suspend from the curl thread).
    var onData: (@Sendable (_ transfer: any TransportTransfer, _ total: Int) -> Void)?
    var onResponse: (@Sendable (_ transfer: any TransportTransfer, HTTPURLResponse) -> Void)?

    /// `keepsBody: false` counts bytes without keeping them (huge bodies).
    init(keepsBody: Bool = true) {
        self.keepsBody = keepsBody
    }

    // MARK: TransferClient

    func transfer(_ transfer: any TransportTransfer, didReceive response: TransportResponse) {
        let http = response.httpURLResponse
        enter("response")
        lock.withLock {
            recorded.append(.response(http?.statusCode ?? -1))
            if let http { responses.append(http) }
            bodyBytes = Data()
            bodyCount = 0
        }
        if let http { onResponse?(transfer, http) }
        leave()
    }

    func transfer(_ transfer: any TransportTransfer, didReceive data: Data) {
        enter("data")
        let total: Int = lock.withLock {
            if case .data(let previous) = recorded.last {
                recorded[recorded.count - 1] = .data(previous + data.count)
            } else {
                recorded.append(.data(data.count))
            }
            if keepsBody { bodyBytes.append(data) }
            bodyCount += data.count
            return bodyCount
        }
        onData?(transfer, total)
        leave()
    }

    func transfer(_ transfer: any TransportTransfer, willRedirect response: HTTPURLResponse, to request: URLRequest) -> URLRequest? {
        enter("redirect")
        defer { leave() }
        lock.withLock { recorded.append(.redirect(from: response.statusCode, to: request.url?.absoluteString ?? "")) }
        return redirectDecision(response, request)
    }

    func transfer(_ transfer: any TransportTransfer, didReceive challenge: TransferChallenge) -> URLCredential? {
        enter("challenge")
        defer { leave() }
        lock.withLock { recorded.append(.challenge(challenge)) }
        return credential(challenge)
    }

    func transfer(_ transfer: any TransportTransfer, didCompleteWith error: (any Error)?, metrics: TransferMetrics) {
        enter("complete")
        lock.withLock {
            recorded.append(.complete((error as? URLError)?.code))
            finalError = error
            finalMetrics = metrics
            completions += 1
        }
        leave()
        finished.signal()
    }

    private func enter(_ name: String) {
        lock.withLock {
            inEvent += 1
            if inEvent > 1 { overlaps += 1 }
            if cancelReturned { lateEvents.append(name) }
            eventThreads.insert(currentThreadName())
        }
    }

    private func leave() {
        lock.withLock { inEvent -= 1 }
    }

    // MARK: For assertions

    /// Call right after `cancel()` returned: any event that begins later is a contract violation.
    func noteCancelReturned() { lock.withLock { cancelReturned = true } }

    var events: [Event] { lock.withLock { recorded } }
    var body: Data { lock.withLock { bodyBytes } }
    var receivedBytes: Int { lock.withLock { bodyCount } }
    var lastResponse: HTTPURLResponse? { lock.withLock { responses.last } }
    var error: (any Error)? { lock.withLock { finalError } }
    var urlError: URLError? { error as? URLError }
    var metrics: TransferMetrics? { lock.withLock { finalMetrics } }
    var completionCount: Int { lock.withLock { completions } }
    /// Events that overlapped another event of the same transfer (must be 0).
    var overlappingEvents: Int { lock.withLock { overlaps } }
    /// Events that began after `noteCancelReturned()` (must be empty).
    var eventsAfterCancel: [String] { lock.withLock { lateEvents } }
    var threads: Set<String> { lock.withLock { eventThreads } }

    /// Waits for the completion (bounded against hangs only). False on timeout (an issue is recorded).
    @discardableResult
    func waitForCompletion(timeout: TimeInterval = 60, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let done = await finished.wait(timeout: timeout)
        if !done { Issue.record("no completion within \(timeout) s; events: \(events)", sourceLocation: sourceLocation) }
        return done
    }
}

/// A one-shot signal an async test awaits without polling (resumed by the event; a timeout only bounds hangs).
final class Completion: @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private var done = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func signal() {
        let resumed: [CheckedContinuation<Void, Never>] = lock.withLock {
            done = true
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in resumed { waiter.resume() }
    }

    var isDone: Bool { lock.withLock { done } }

    /// True when signalled within `timeout`.
    func wait(timeout: TimeInterval) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let already: Bool = self.lock.withLock {
                        if self.done { return true }
                        self.waiters.append(continuation)
                        return false
                    }
                    if already { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                return false
            }
            let first = await group.next() ?? false
            if !first { self.signal() }  // releases the waiting child so the group can end
            group.cancelAll()
            return first && self.isDone
        }
    }
}

/// A curl transport and helpers to run one transfer on it.
struct CurlHarness {
    let transport: CurlTransport

    init(_ adjust: (inout CurlTransportSettings) -> Void = { _ in }) {
        var settings = CurlTransportSettings()
        adjust(&settings)
        transport = CurlTransport(settings: settings)
    }

    /// Starts a transfer of `url` with `client`.
    @discardableResult
    func start(
        _ url: URL, client: RecordingTransferClient, _ adjust: (inout TransferRequest) -> Void = { _ in }
    ) -> any TransportTransfer {
        var request = TransferRequest(urlRequest: URLRequest(url: url))
        // Generous: held requests wait on the test, which a loaded machine can delay; tests of the backstop set
        // their own.
        request.idleTimeout = 180
        adjust(&request)
        let transfer = transport.makeTransfer(request, client: client)
        transfer.resume()
        return transfer
    }

    /// Runs one transfer to its end.
    func run(
        _ url: URL, client: RecordingTransferClient = RecordingTransferClient(),
        sourceLocation: SourceLocation = #_sourceLocation, _ adjust: (inout TransferRequest) -> Void = { _ in }
    ) async -> RecordingTransferClient {
        start(url, client: client, adjust)
        await client.waitForCompletion(sourceLocation: sourceLocation)
        return client
    }

    func invalidate() { transport.invalidate(cancellingTransfers: true) }
}

/// The calling thread's kernel name (what `ccurl_name_current_thread` set), from /proc.
func currentThreadName() -> String {
    let path = "/proc/thread-self/comm"
    return ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing

/// A transport driven by the test (issue 14; Nuke's `MockDataLoader`, swift-nio's `EmbeddedChannel`): each
/// transfer waits for the test to deliver its events, on the test's thread, one at a time. Events after a
/// cancel are dropped as the seam's contract says, unless `deliversAfterCancel` simulates a transport whose
/// event was already running (the operation must drop them itself then).
final class ScriptedTransport: DownloadTransport, Sendable {
    /// The transfers made so far, in order; awaited by `transfer(_:timeout:)`.
    private let made = Watched<[ScriptedTransfer]>([])
    /// What `unsupportedReason(for:)` answers.
    let refuse: @Sendable (URL) -> String?

    init(refuse: @escaping @Sendable (URL) -> String? = { _ in nil }) {
        self.refuse = refuse
    }

    func makeTransfer(_ request: TransferRequest, client: any TransferClient) -> any TransportTransfer {
        let transfer = ScriptedTransfer(request: request, client: client)
        made.withLock { $0.append(transfer) }
        return transfer
    }

    func invalidate(cancellingTransfers: Bool) {}

    func unsupportedReason(for url: URL) -> String? { refuse(url) }

    /// Every transfer made so far.
    var transfers: [ScriptedTransfer] { made.current }

    /// The `index`-th transfer (0-based), once the operation has made AND resumed it; nil if that does not
    /// happen within `timeout` (a bound against hangs, never a timing assertion).
    func transfer(_ index: Int = 0, timeout: TimeInterval = 30) async -> ScriptedTransfer? {
        await firstTransfer(timeout: timeout, describe: { "\($0.count) transfers made" }) {
            $0.count > index ? $0[index] : nil
        }
    }

    /// The first transfer for `url`, once made and resumed. Downloads of different URLs start on the
    /// downloader's operation queue in no fixed order, so a test that starts two must not pick them by index.
    func transfer(for url: URL, timeout: TimeInterval = 30) async -> ScriptedTransfer? {
        await firstTransfer(
            timeout: timeout, describe: { "\($0.map { $0.request.urlRequest.url?.lastPathComponent ?? "?" })" }
        ) { $0.first { $0.request.urlRequest.url == url } }
    }

    /// The transfer `pick` finds among those made, once it is there and the operation resumed it.
    private func firstTransfer(
        timeout: TimeInterval, describe: @escaping ([ScriptedTransfer]) -> String,
        pick: @escaping ([ScriptedTransfer]) -> ScriptedTransfer?
    ) async -> ScriptedTransfer? {
        guard await made.wait(timeout: timeout, describe: describe, until: { pick($0) != nil }) else { return nil }
        // Read under `made`'s lock, not taken from the waiter's resumption: when `makeTransfer` wakes the waiter
        // before this task suspended, the hand-over goes through the runtime's atomics, which ThreadSanitizer
        // cannot see (it reported the transfer's initial state as racing with its first read, in CI).
        guard let published = pick(made.current), await published.resumed(timeout: timeout) else { return nil }
        return published
    }
}

/// One scripted transfer: the test plays the server.
final class ScriptedTransfer: TransportTransfer, @unchecked Sendable {  // `lock` guards every var
    let request: TransferRequest
    private weak var client: (any TransferClient)?
    private let lock = NSLock()
    /// Whether the operation resumed this transfer; awaited by `resumed(timeout:)`.
    private let resumedFlag = Watched(false)
    private var cancels = 0
    private var priorities: [Float] = []
    private var deciding = false
    private var cancelsWhileDeciding = 0
    private var ended = false
    /// Deliver events even after `cancel()` (as corelibs does with data already read).
    var deliversAfterCancel = false

    init(request: TransferRequest, client: any TransferClient) {
        self.request = request
        self.client = client
    }

    // MARK: - What the operation did

    var cancelCount: Int { lock.withLock { cancels } }
    var isCancelled: Bool { cancelCount > 0 }
    /// `setPriority` calls, in order.
    var priorityChanges: [Float] { lock.withLock { priorities } }
    /// Cancels that arrived while a redirect or challenge was being decided.
    var cancelsDuringDecisions: Int { lock.withLock { cancelsWhileDeciding } }

    /// True once the operation has resumed this transfer; false after `timeout` (a bound against hangs).
    func resumed(timeout: TimeInterval) async -> Bool {
        await resumedFlag.wait(timeout: timeout, describe: { _ in "transfer not resumed" }, until: { $0 })
    }

    // MARK: - TransportTransfer

    func resume() {
        resumedFlag.withLock { $0 = true }
    }

    func cancel() {
        lock.withLock {
            cancels += 1
            if deciding { cancelsWhileDeciding += 1 }
        }
    }

    func suspendReading() {}
    func resumeReading() {}

    func setPriority(_ priority: Float) {
        lock.withLock { priorities.append(priority) }
    }

    // MARK: - Events (the test plays the server)

    /// The client when an event may be delivered now.
    private func deliverable() -> (any TransferClient)? {
        let resumed = resumedFlag.current
        let ok: Bool = lock.withLock { resumed && !ended && (cancels == 0 || deliversAfterCancel) }
        return ok ? client : nil
    }

    /// Headers of a response; returns whether the event was delivered.
    @discardableResult
    func respond(status: Int = 200, headers: [String: String] = ["Content-Type": "image/png"], url: URL? = nil) -> Bool {
        guard let client = deliverable(),
              let response = HTTPURLResponse(
                url: url ?? request.urlRequest.url ?? URL(fileURLWithPath: "/"), statusCode: status, httpVersion: "HTTP/1.1",
                headerFields: headers)
        else { return false }
        client.transfer(self, didReceive: response)
        return true
    }

    @discardableResult
    func send(_ data: Data) -> Bool {
        guard let client = deliverable() else { return false }
        client.transfer(self, didReceive: data)
        return true
    }

    /// `data` in `count` pieces of about equal size.
    func send(_ data: Data, inChunks count: Int) {
        let size = max(1, (data.count + count - 1) / count)
        var offset = 0
        while offset < data.count {
            send(data.subdata(in: offset..<min(data.count, offset + size)))
            offset += size
        }
    }

    /// A 3xx to `url`: the client's decision (nil: not followed).
    func redirect(to url: URL, status: Int = 302) -> URLRequest? {
        guard let client = deliverable(), let from = request.urlRequest.url,
              let response = HTTPURLResponse(url: from, statusCode: status, httpVersion: "HTTP/1.1",
                                             headerFields: ["Location": url.absoluteString])
        else { return nil }
        lock.withLock { deciding = true }
        defer { lock.withLock { deciding = false } }
        return client.transfer(self, willRedirect: response, to: URLRequest(url: url))
    }

    /// A Basic challenge. As the URLSession adapter does, a refusal makes the 401 final: the transfer completes.
    func challenge(host: String? = nil, previousFailureCount: Int = 0) -> URLCredential? {
        guard let client = deliverable() else { return nil }
        let challenge = TransferChallenge(
            host: host ?? request.urlRequest.url?.host ?? "", port: request.urlRequest.url?.port ?? 80,
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic, realm: "scripted",
            previousFailureCount: previousFailureCount)
        lock.withLock { deciding = true }
        let credential = client.transfer(self, didReceive: challenge)
        lock.withLock { deciding = false }
        if credential == nil { complete() }
        return credential
    }

    /// The end; returns whether it was delivered.
    @discardableResult
    func complete(error: (any Error)? = nil, metrics: TransferMetrics = TransferMetrics()) -> Bool {
        guard let client = deliverable() else { return false }
        lock.withLock { ended = true }
        client.transfer(self, didCompleteWith: error, metrics: metrics)
        return true
    }
}

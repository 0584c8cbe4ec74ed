import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// Issue 20, point 2: the request callers see carries their `downloadTimeout` (0 or less: 15 s), as
/// SDWebImage's does: the token's, the operation's, and the one a request modifier receives. The URLSession
/// backstop (+300 s) exists only in that transport's own copy of the request.
@Suite struct RequestTimeoutTests {
    let server = FixtureServer.shared

    /// Records the timeout of every request it is given.
    final class TimeoutRecorder: ImageDownloaderRequestModifier, @unchecked Sendable {  // `lock` guards `seen`
        private let lock = NSLock()
        private var seen: [TimeInterval] = []
        let replacement: TimeInterval?

        init(replacing timeout: TimeInterval? = nil) { replacement = timeout }

        var timeouts: [TimeInterval] { lock.withLock { seen } }

        func modifiedRequest(with request: URLRequest) -> URLRequest? {
            lock.withLock { seen.append(request.timeoutInterval) }
            guard let replacement else { return request }
            var modified = request
            modified.timeoutInterval = replacement
            return modified
        }
    }

    // MARK: - Scripted: what each party sees

    @Test(arguments: [(2.0, 2.0), (15, 15), (0.5, 0.5), (0, 15), (-3, 15), (120, 120)])
    func theCallersRequestCarriesTheDownloadTimeout(_ example: (configured: TimeInterval, expected: TimeInterval)) async throws {
        let modifier = TimeoutRecorder()
        let harness = ScriptedHarness { $0.downloadTimeout = example.configured }
        harness.downloader.requestModifier = modifier
        let (recorder, token) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        #expect(token?.request?.timeoutInterval == example.expected)
        #expect(token?.operation.request?.timeoutInterval == example.expected)
        #expect(modifier.timeouts == [example.expected])
        // The transport is handed the same request, and the idle timeout it may back up.
        #expect(transfer.request.urlRequest.timeoutInterval == example.expected)
        #expect(transfer.request.idleTimeout == example.expected)
        token?.cancel()
        await recorder.completion()
    }

    /// The context's `downloadTimeout` wins over the configuration's, in the request too.
    @Test func theContextsTimeoutIsTheRequests() async throws {
        let harness = ScriptedHarness { $0.downloadTimeout = 30 }
        let (recorder, token) = harness.download(context: ImageDownloaderContext(downloadTimeout: 4))
        let transfer = try #require(await harness.transport.transfer())
        #expect(token?.request?.timeoutInterval == 4)
        #expect(transfer.request.idleTimeout == 4)
        token?.cancel()
        await recorder.completion()
    }

    /// A request modifier that changes the timeout sets the download's idle timeout, as the request's
    /// timeout does on SDWebImage (its session uses it): here 3 s instead of the configured 60.
    @Test func aModifierThatChangesTheTimeoutSetsTheIdleTimeout() async throws {
        let harness = ScriptedHarness { $0.downloadTimeout = 60 }
        harness.downloader.requestModifier = TimeoutRecorder(replacing: 3)
        let (recorder, token) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        #expect(token?.request?.timeoutInterval == 3)
        #expect(transfer.request.idleTimeout == 3)
        harness.clock.advance(by: 2.9)
        await harness.drained()
        #expect(recorder.finals.isEmpty)
        harness.clock.advance(by: 0.2)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "network-1001", "got \(String(describing: recorder.final?.error))")
    }

    // MARK: - Real transports

    @Test(arguments: TestTransports.all)
    func theTokenAndOperationCarryTheTimeoutOnEveryTransport(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) { $0.downloadTimeout = 2 }
        let recorder = DownloadRecorder()
        let token = try #require(downloader.downloadImage(
            server.url("/images/tiny.png?tag=\(newTag())"), completed: recorder.completed))
        #expect(token.request?.timeoutInterval == 2)
        #expect(token.operation.request?.timeoutInterval == 2)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.final?.image != nil, "got \(String(describing: recorder.error))")
        #expect(token.request?.timeoutInterval == 2)
    }

    /// The backstop lives only in the data task's own request (read when the start is posted: the task
    /// exists by then, issue 20 point 3). A request the downloader made from a URL never had its timeout
    /// assigned, so corelibs arms the session's request timeout, already the backstop: the transfer leaves the
    /// request alone (no copy). With another idle timeout than the session's, or a request a modifier returned,
    /// the transfer assigns the backstop.
    @Test(arguments: [
        (context: nil, modifier: false, backstop: 302.0, assigned: false),
        (context: 5, modifier: false, backstop: 305, assigned: true),
        (context: nil, modifier: true, backstop: 302, assigned: true),
    ] as [(context: TimeInterval?, modifier: Bool, backstop: TimeInterval, assigned: Bool)])
    func theURLSessionBackstopStaysInsideTheTasksRequest(
        _ example: (context: TimeInterval?, modifier: Bool, backstop: TimeInterval, assigned: Bool)
    ) async throws {
        let (downloader, queue) = makeDownloader(.urlSession) { $0.downloadTimeout = 2 }
        if example.modifier { downloader.requestModifier = TimeoutRecorder() }
        let tag = newTag()
        let taskRequest = Locked<URLRequest?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: .imageDownloadStart, object: nil, queue: nil) { note in
            guard let operation = note.object as? ImageDownloaderOperation,
                  operation.request?.url?.absoluteString.contains(tag) == true else { return }
            taskRequest.withLock { $0 = operation.dataTask?.originalRequest }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let recorder = DownloadRecorder()
        let token = downloader.downloadImage(
            server.url("/images/tiny.png?tag=\(tag)"), context: ImageDownloaderContext(downloadTimeout: example.context),
            completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        let idle = example.context ?? 2
        #expect(token?.request?.timeoutInterval == idle)
        let request = try #require(taskRequest.current)
        #expect(TransportBackstop.timeout(idle: idle) == example.backstop)
        #if canImport(FoundationNetworking)
        // Unassigned, the request keeps the caller's timeout and corelibs arms the session's (2 s idle: 302),
        // as CorelibsRequestTimeoutTests shows.
        #expect(request.timeoutInterval == (example.assigned ? example.backstop : idle))
        #else
        #expect(request.timeoutInterval == example.backstop)
        #endif
    }
}

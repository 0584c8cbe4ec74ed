import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// With URLSession, a custom operation class sees the session's callbacks through its overridable
/// `URLSessionDataDelegate` methods (contract), and `super` carries the download on.
@Suite struct SessionDelegateOverrideTests {
    let server = FixtureServer.shared

    @Test func aSubclassOverridingTheDelegateMethodsSeesEveryEvent() async throws {
        let (downloader, _) = makeDownloader(.urlSession) { $0.operationClass = ObservingOperation.self }
        let tag = newTag()
        let url = server.url("/drip/image.png?chunk=8192&delay_ms=1&tag=\(tag)")
        let result = try await downloader.image(for: url)
        #expect(result.image?.width == 160)
        let seen = ObservingOperation.seen.current[url.absoluteString]
        #expect(seen?.responses == 1)
        #expect(seen?.bytes == 55916)
        #expect(seen?.completions == 1)
    }

    @Test func anOperationOnItsOwnSessionGoesThroughTheSameMethods() async throws {
        let url = server.url("/images/tiny.png?tag=\(newTag())")
        let operation = ObservingOperation(
            request: URLRequest(url: url), session: nil, options: [], context: ImageDownloaderContext(callbackQueue: .global()))
        let recorder = DownloadRecorder()
        _ = operation.addHandlers(forProgress: nil, completed: recorder.completed)
        operation.start()
        await recorder.waitForCompletion()
        #expect(recorder.final?.image?.width == 1)
        #expect(ObservingOperation.seen.current[url.absoluteString]?.bytes == 70)
    }
}

/// Counts what reaches its delegate methods, per URL, then lets the package handle it.
final class ObservingOperation: ImageDownloaderOperation, @unchecked Sendable {  // static state is lock-guarded
    struct Seen {
        var responses = 0
        var bytes = 0
        var completions = 0
    }

    static let seen = Locked<[String: Seen]>([:])

    private func note(_ change: (inout Seen) -> Void) {
        let key = request?.url?.absoluteString ?? ""
        Self.seen.withLock { change(&$0[key, default: Seen()]) }
    }

    override func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        note { $0.responses += 1 }
        super.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        note { $0.bytes += data.count }
        super.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        note { $0.completions += 1 }
        super.urlSession(session, task: task, didCompleteWithError: error)
    }
}

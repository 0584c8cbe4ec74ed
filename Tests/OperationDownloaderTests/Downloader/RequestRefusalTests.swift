import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Issue 12, points 4 and 7: requests that cannot be loaded end at once, with nothing queued and no progress.
@Suite struct RequestRefusalTests {
    let server = FixtureServer.shared

    /// Runs a download whose request modifier returns `modified`, expects `expected` synchronously.
    private func expectRefusal(
        _ transport: ImageDownloaderTransport,
        _ modified: @escaping @Sendable (URLRequest) -> URLRequest?, _ expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let recorder = DownloadRecorder()
        let context = ImageDownloaderContext(requestModifier: ImageDownloaderRequestModifierBlock { modified($0) })
        let token = downloader.downloadImage(
            server.url("/images/tiny.png?tag=\(tag)"), context: context, progress: recorder.progress,
            completed: recorder.completed)
        #expect(token == nil, sourceLocation: sourceLocation)
        #expect(recorder.finals.count == 1, "answered synchronously", sourceLocation: sourceLocation)
        #expect(recorder.downloaderError?.caseName == expected, "got \(String(describing: recorder.error))",
                sourceLocation: sourceLocation)
        #expect(downloader.currentDownloadCount == 0, sourceLocation: sourceLocation)
        await drain(queue)
        #expect(recorder.progressList.isEmpty, sourceLocation: sourceLocation)
        #expect(server.stats(tag: tag).count == 0, sourceLocation: sourceLocation)
    }

    /// corelibs Foundation traps (fatalError "No URL in request.") on such a request: it must never get there.
    @Test(arguments: TestTransports.all)
    func aModifiedRequestWithoutAURLIsAnInvalidURL(_ transport: ImageDownloaderTransport) async {
        await expectRefusal(transport, { request in
            var copy = request
            copy.url = nil
            return copy
        }, "invalidURL")
    }

    @Test(arguments: TestTransports.all)
    func aModifiedRequestWithASchemeTheTransportCannotLoadIsAnInvalidURL(_ transport: ImageDownloaderTransport) async {
        await expectRefusal(transport, { request in
            var copy = request
            copy.url = URL(string: "ftp://127.0.0.1/tiny.png")
            return copy
        }, "invalidURL")
        await expectRefusal(transport, { request in
            var copy = request
            copy.url = URL(fileURLWithPath: "/etc/passwd")
            return copy
        }, "invalidURL")
    }

    #if canImport(FoundationNetworking)
    /// corelibs URLSession fails every IPv6 literal host with an unexplained -1000: say why and what to use.
    @Test func anIPv6LiteralHostIsUnsupportedWithURLSessionAndSaysWhatToUse() async throws {
        let (downloader, _) = makeDownloader()
        let recorder = DownloadRecorder()
        let token = downloader.downloadImage(
            URL(string: "http://[::1]:\(server.port)/images/tiny.png"), progress: recorder.progress,
            completed: recorder.completed)
        #expect(token == nil)
        #expect(recorder.downloaderError?.caseName == "unsupportedOnPlatform", "got \(String(describing: recorder.error))")
        if case .unsupportedOnPlatform(let reason)? = recorder.downloaderError {
            #expect(reason.contains("IPv6") && reason.contains(".curl"), "\(reason)")
        }
        #expect(recorder.progressList.isEmpty)
        #expect(downloader.currentDownloadCount == 0)
    }

    @Test func aRedirectToAnIPv6LiteralHostIsUnsupportedToo() async throws {
        let (downloader, _) = makeDownloader()
        let recorder = DownloadRecorder()
        let target = "http://[::1]:\(server.port)/images/tiny.png"
        let encoded = try #require(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        downloader.downloadImage(server.url("/redirect/1?to=\(encoded)&tag=\(newTag())"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "unsupportedOnPlatform", "got \(String(describing: recorder.error))")
    }

    /// The same for an operation used on its own.
    @Test func anOperationOnItsOwnRefusesAnIPv6LiteralHost() async throws {
        let request = URLRequest(url: try #require(URL(string: "http://[::1]:1/tiny.png")))
        let operation = ImageDownloaderOperation(
            request: request, session: nil, options: [], context: ImageDownloaderContext(callbackQueue: .global()))
        let recorder = DownloadRecorder()
        _ = operation.addHandlers(forProgress: recorder.progress, completed: recorder.completed)
        operation.start()
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "unsupportedOnPlatform")
    }
    #endif
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// The downloader on the curl transport (issue 15): what only curl can do, end to end through the operation
/// (the suites parametrised over `TestTransports` cover the shared semantics on both transports).
@Suite(.requires(.libcurl))
struct CurlDownloaderTests {
    let server = FixtureServer.shared

    /// libcurl's measurements reach `ImageDownloadMetrics`; the second download over the kept-alive
    /// connection says so.
    @Test func metricsComeFromLibcurl() async throws {
        let (downloader, _) = makeDownloader(.curl) { $0.maxConcurrentDownloads = 1 }
        let tag = newTag()
        let first = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)&n=1"))
        let second = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)&n=2"))
        let metrics = try #require(first.metrics)
        #expect(metrics.httpVersion == "1.1")
        #expect(metrics.remoteAddress == "127.0.0.1")
        #expect(metrics.connectionReused == false)
        #expect((metrics.domainLookupDuration ?? -1) >= 0)
        #expect((metrics.connectDuration ?? -1) >= 0)
        #expect(metrics.secureConnectionDuration == nil || metrics.secureConnectionDuration == 0, "plain HTTP")
        #expect(metrics.attemptCount == 1)
        #expect(metrics.receivedBytes == 70)
        #expect(second.metrics?.connectionReused == true)
    }

    /// libcurl re-sends a request by itself when a reused connection turns out dead: the server saw two
    /// requests, and `attemptCount` says so.
    @Test func silentReSendCountsAsAnAttempt() async throws {
        let (downloader, _) = makeDownloader(.curl) { $0.maxConcurrentDownloads = 1 }
        let tag = newTag()
        _ = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"))
        let result = try await downloader.image(for: server.url("/drop-if-reused/tiny.png?tag=\(tag)"))
        #expect(result.image?.width == 1)
        #expect(result.metrics?.attemptCount == 2)
        #expect(server.requests(tag: tag).filter { $0.path == "/drop-if-reused/tiny.png" }.count == 2)
    }

    /// An IPv6 literal host (URLSession on Linux refuses it: RequestRefusalTests).
    @Test(.requires(.ipv6Loopback)) func ipv6LiteralHost() async throws {
        let ipv6 = try LaunchedFixtureServer(arguments: ["--host", "::1"], host: "[::1]")
        defer { ipv6.stop() }
        let (downloader, _) = makeDownloader(.curl)
        let result = try await downloader.image(for: ipv6.url("/images/tiny.png?tag=\(newTag())"))
        #expect(result.image?.width == 1)
        #expect(result.metrics?.remoteAddress == "::1")
        // A redirect from 127.0.0.1 to the IPv6 literal is followed too.
        let target = ipv6.url("/images/tiny.png?tag=\(newTag())").absoluteString
        let encoded = try #require(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let redirected = try await downloader.image(for: server.url("/redirect/1?to=\(encoded)&tag=\(newTag())"))
        #expect(redirected.image?.width == 1)
        #expect(redirected.metrics?.remoteAddress == "::1")
        #expect(redirected.metrics?.redirectCount == 2)
    }

    /// A body over the limit that no Content-Length announced (chunked) ends as `.responseTooLarge`, with the
    /// memory bounded by the limit.
    @Test func chunkedBodyOverTheLimitIsResponseTooLarge() async throws {
        let (downloader, _) = makeDownloader(.curl) { $0.maximumResponseSize = 100_000 }
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/bytes?n=1000000&chunked=1&ct=image/png&tag=\(newTag())"),
            progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "responseTooLarge", "got \(String(describing: recorder.error))")
        #expect((recorder.progressList.map(\.0).max() ?? 0) <= 100_000)
    }

    /// The transport's own size error (a client that does not check) is `.responseTooLarge` too.
    @Test func transportSizeLimitMapsToResponseTooLarge() {
        let error = ImageDownloaderOperation.downloaderError(
            for: URLError(.dataLengthExceedsMaximum), cancelRequested: false, bodySize: 5000)
        #expect(error.caseName == "responseTooLarge")
        if case .responseTooLarge(let size) = error { #expect(size == 5000) }
    }

    // MARK: - Custom operation classes

    /// A subclass of `ImageDownloaderOperation` runs on curl (its URLSession delegate methods are never called).
    @Test func aSubclassRunsOnCurl() async throws {
        let (downloader, _) = makeDownloader(.curl) { $0.operationClass = ObservingOperation.self }
        let url = server.url("/images/tiny.png?tag=\(newTag())")
        let result = try await downloader.image(for: url)
        #expect(result.image?.width == 1)
        #expect(result.metrics?.httpVersion == "1.1", "carried by libcurl")
        #expect(ObservingOperation.seen.current[url.absoluteString] == nil, "no URLSession delegate call on curl")
    }

    /// A class that is not an `ImageDownloaderOperation` needs a URLSession: on curl every download fails at
    /// once with `.unsupportedOnPlatform` saying what to do, and nothing is requested.
    @Test func aBareProtocolClassFailsClearly() async throws {
        let (downloader, _) = makeDownloader(.curl) { $0.operationClass = BareOperation.self }
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)"), completed: recorder.completed)
        await recorder.waitForCompletion()
        guard case .unsupportedOnPlatform(let reason) = recorder.downloaderError else {
            Issue.record("got \(String(describing: recorder.error))")
            return
        }
        #expect(reason.contains("BareOperation") && reason.contains(".urlSession"), "\(reason)")
        #expect(server.requests(tag: tag).isEmpty)
    }
}

/// A custom operation class that is not an `ImageDownloaderOperation` subclass (never started here: the curl
/// downloader refuses it before making one).
final class BareOperation: Operation, ImageDownloaderOperationProtocol, @unchecked Sendable {  // never run; no state changes
    let request: URLRequest?
    var response: URLResponse? { nil }
    var dataTask: URLSessionTask? { nil }
    var credential: URLCredential?
    var minimumProgressInterval: Double = 0
    var acceptableStatusCodes: IndexSet?
    var acceptableContentTypes: Set<String>?
    var metrics: ImageDownloadMetrics? { nil }

    init(request: URLRequest, session: URLSession?, options: ImageDownloaderOptions, context: ImageDownloaderContext?) {
        self.request = request
    }

    func addHandlers(forProgress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?) -> AnyObject? {
        nil
    }

    func cancel(_ token: AnyObject?) -> Bool { false }
}

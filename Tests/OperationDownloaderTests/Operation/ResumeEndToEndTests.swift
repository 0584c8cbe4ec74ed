import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// A lost connection retried and resumed against the fixture server's `/resume` endpoint (fixture_resume.py),
/// on every transport (issue 37): the server logs each request's `Range` and `If-Range` and the bytes it sent,
/// so what was asked for and what travelled is checked where it happened.
@Suite struct ResumeEndToEndTests {
    let server = FixtureServer.shared
    static let original = (try? FixtureServer.fixtureData("image.png")) ?? Data()
    static let changed = (try? FixtureServer.fixtureData("adam7.png")) ?? Data()

    private func downloader(_ transport: ImageDownloaderTransport, attempts: Int = 3) -> ImageDownloader {
        makeDownloader(transport) {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: attempts, initialDelay: 0.01, maximumDelay: 0.05)
            $0.imageCache = nil
        }.0
    }

    /// Requests of `tag` to /resume, in order.
    private func requests(_ tag: String) -> [LoggedRequest] {
        server.requests(tag: tag).filter { $0.path.hasPrefix("/resume/") }
    }

    enum Cut: String, CaseIterable, CustomTestStringConvertible {
        case fin, rst
        var testDescription: String { rawValue }
    }

    /// A FIN or an RST after 20000 bytes: the second request asks for the rest with the strong ETag, the server
    /// sends only the rest, and the bytes are the image's.
    @Test(arguments: TestTransports.all, Cut.allCases)
    func aCutBodyIsResumed(_ transport: ImageDownloaderTransport, _ cut: Cut) async throws {
        let tag = newTag()
        let result = try await downloader(transport).image(
            for: server.url("/resume/\(tag)/image.png?cut=20000&mode=\(cut.rawValue)&tag=\(tag)"))
        #expect(result.data == Self.original)
        #expect(result.metrics?.resumedFromByte == 20000 && result.metrics?.attemptCount == 2)
        #expect(result.response?.statusCode == 206 && result.source == .network)
        let log = requests(tag)
        #expect(log.count == 2)
        #expect(log.last?.headers["range"] == "bytes=20000-")
        // The fixture server's ETag of image.png: the first 32 hex digits of its SHA-256.
        #expect(log.last?.headers["if-range"] == "\"a20a65a5755edfa3287b6a2acd5cddca\"")
        #expect(log.last?.bytesSent == Self.original.count - 20000)
    }

    /// What a resume saved is counted (`od_resumed_bytes_total`, issue 38): the bytes kept, with one retry for the
    /// lost connection and two requests observed.
    @Test(arguments: TestTransports.all)
    func theBytesAResumeKeptAreCounted(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let metrics = PrometheusMetrics()
        let downloader = makeDownloader(transport) {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 3, initialDelay: 0.01, maximumDelay: 0.05)
            $0.imageCache = nil
            $0.metricsSink = metrics
        }.0
        let result = try await downloader.image(for: server.url("/resume/\(tag)/image.png?cut=20000&mode=fin&tag=\(tag)"))
        #expect(result.data == Self.original && result.metrics?.resumedFromByte == 20000)
        let exposition = try Exposition(metrics.exposition())
        #expect(exposition.value(ImageDownloaderMetricName.resumedBytes) == 20000)
        #expect(exposition.total(ImageDownloaderMetricName.retries) == 1)
        #expect(exposition.total(ImageDownloaderMetricName.requestDuration + "_count") == 2)
    }

    /// A body without a validator, or from a server that takes no ranges, or chunked: the retry fetches it whole.
    @Test(arguments: TestTransports.all, ["validator=none", "ranges=0", "chunked=1", "validator=weak", "gzip=1"])
    func withoutWhatAResumeNeedsTheRetryFetchesTheWhole(_ transport: ImageDownloaderTransport, _ query: String) async throws {
        let tag = newTag()
        let result = await downloader(transport).imageResult(
            for: server.url("/resume/\(tag)/image.png?cut=20000&\(query)&tag=\(tag)"))
        let log = requests(tag)
        #expect(log.count == 2 && log.allSatisfy { $0.headers["range"] == nil && $0.headers["if-range"] == nil })
        if query == "gzip=1" {
            // The body is decoded by the transport; which bytes arrive is the transport's, not a splice.
            #expect((try? result.get()) != nil)
        } else {
            let image = try result.get()
            #expect(image.data == Self.original && image.metrics?.resumedFromByte == nil)
        }
    }

    /// The image changed between the attempts: If-Range no longer matches, the server sends the new one whole,
    /// and the download is the new image only.
    @Test(arguments: TestTransports.all)
    func aChangedImageStartsOver(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let result = try await downloader(transport).image(
            for: server.url("/resume/\(tag)/image.png?cut=20000&changed=1&tag=\(tag)"))
        #expect(result.data == Self.changed && result.metrics?.resumedFromByte == nil)
        let log = requests(tag)
        #expect(log.count == 2 && log.last?.headers["range"] == "bytes=20000-" && log.last?.status == 200)
    }

    /// A broken server answers the Range with a 206 of the changed image, ignoring If-Range: the other ETag gives
    /// it away, the part is dropped and the whole is asked for again. Other 206s that do not fit the bytes kept
    /// (another first byte or length, multipart, an unknown length) and a 416 go the same way.
    @Test(arguments: TestTransports.all, ["changed=1&ignore_if_range=1", "bad206=start", "bad206=total", "bad206=multipart",
                                          "bad206=unknown", "range416=1"])
    func aPartThatDoesNotFitIsNeverJoined(_ transport: ImageDownloaderTransport, _ query: String) async throws {
        let tag = newTag()
        let result = try await downloader(transport).image(for: server.url("/resume/\(tag)/image.png?cut=20000&\(query)&tag=\(tag)"))
        #expect(result.data == (query.hasPrefix("changed") ? Self.changed : Self.original), "never two versions joined")
        let log = requests(tag)
        #expect(log.count == 3, "\(log.map { ($0.status, $0.headers["range"]) })")
        #expect(log.dropFirst().first?.headers["range"] == "bytes=20000-" && log.last?.headers["range"] == nil)
        #expect(result.metrics?.attemptCount == 3 && result.metrics?.resumedFromByte == nil)
    }

    /// With a progress handler and partial images the cut is retried too: progress goes on from the bytes kept,
    /// and the image is complete.
    @Test(arguments: TestTransports.all)
    func progressAndPartialImagesGoOnAcrossAResume(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let (downloader, queue) = makeDownloader(transport) {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0.01)
            $0.imageCache = nil
            $0.progressiveDecodingInterval = 0
        }
        let recorder = DownloadRecorder()
        let token = downloader.downloadImage(
            server.url("/resume/\(tag)/progressive.jpg?cut=30000&tag=\(tag)"), options: .progressiveLoad,
            progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        let original = try FixtureServer.fixtureData("progressive.jpg")
        #expect(recorder.final?.data == original && recorder.final?.image?.isIncomplete == false)
        #expect(token?.metrics?.resumedFromByte == 30000)
        let received = recorder.progressList.map(\.0)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 <= $1 }, "\(received)")
        #expect(recorder.progressList.last.map { $0.0 == original.count && $0.1 == original.count } == true)
    }

    /// Docs/Reliability.md "Resume": a 20 MB body cut at 80 % costs 4 MB more with a resume, where a retry from
    /// zero sends all 20 MB again (36 MB in all instead of 24 MB).
    @Test(arguments: TestTransports.all)
    func a20MBBodyCutAt80PercentSendsOnlyTheRest(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let total = 20_000_000, cut = 16_000_000
        let result = try await downloader(transport).image(
            for: server.url("/resume/\(tag)/bytes-\(total)?cut=\(cut)&tag=\(tag)"), options: .avoidDecodeImage)
        #expect(result.data.count == total && result.metrics?.resumedFromByte == cut)
        let log = requests(tag)
        #expect(log.map(\.bytesSent) == [cut, total - cut])
        let restarted = newTag()
        _ = try await downloader(transport).image(
            for: server.url("/resume/\(restarted)/bytes-\(total)?cut=\(cut)&validator=none&tag=\(restarted)"), options: .avoidDecodeImage)
        #expect(requests(restarted).map(\.bytesSent) == [cut, total], "without a validator the retry sends it all again")
    }

    /// A TLS connection closed without close_notify mid-body (OpenSSL 3: "unexpected eof while reading") is a lost
    /// connection too, retried and resumed (the curl transport: URLSession on Linux cannot trust the test CA).
    @Test(.requires(.libcurl, .openssl)) func aTLSCloseWithoutCloseNotifyIsResumed() async throws {
        let certificates = try TestCertificates.shared.get()
        let tls = try LaunchedFixtureServer(
            arguments: ["--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey], scheme: "https")
        defer { tls.stop() }
        let tag = newTag()
        let (downloader, _) = makeDownloader(.curl) {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0.01)
            $0.imageCache = nil
            $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile)
        }
        let noRetry = await makeDownloader(.curl) {
            $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile)
            $0.imageCache = nil
        }.0.imageResult(for: tls.url("/resume/\(tag)-a/image.png?cut=20000&tag=\(tag)"))
        guard case .failure(let failure) = noRetry else { Issue.record("a cut TLS body succeeded"); return }
        #expect(failure.downloaderError?.caseName == "network\(URLError.networkConnectionLost.rawValue)", "\(failure)")
        let result = try await downloader.image(for: tls.url("/resume/\(tag)-b/image.png?cut=20000&tag=\(tag)"))
        #expect(result.data == Self.original && result.metrics?.resumedFromByte == 20000)
    }
}

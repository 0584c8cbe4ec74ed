import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// The default transport (issue 37): curl on Linux where libcurl loads, so that a caller of the default is never
/// ended by corelibs' URLSession traps; URLSession where libcurl is missing, on Apple platforms, and for a
/// downloader whose configuration holds what only URLSession serves (an operation class, a session configuration).
@Suite struct DefaultTransportTests {
    @Test func aConfigurationThatNamesNoneGetsThePlatformDefault() {
        let configuration = ImageDownloaderConfiguration()
        #expect(configuration.transport == .platformDefault)
        #if canImport(FoundationNetworking)
        #expect(ImageDownloaderTransport.platformDefault == (ImageDownloaderTransport.curl.isAvailable ? .curl : .urlSession))
        #else
        #expect(ImageDownloaderTransport.platformDefault == .urlSession)
        #endif
    }

    #if canImport(FoundationNetworking)
    @Test(.requires(.libcurl)) func onLinuxTheDefaultIsCurl() {
        #expect(ImageDownloaderTransport.platformDefault == .curl)
        let downloader = ImageDownloader(configuration: ImageDownloaderConfiguration())
        defer { downloader.invalidate(cancelPendingOperations: true) }
        #expect(downloader.configuration.transport == .curl, "the downloader says which transport it runs")
        #expect(downloader.transport is CurlTransport && downloader.session == nil)
    }
    #endif

    /// An operation class (subclasses may override the URLSession delegate methods) or a session configuration
    /// keeps URLSession when no transport is named; a transport named explicitly always wins.
    @Test func whatOnlyURLSessionServesKeepsURLSession() {
        var withClass = ImageDownloaderConfiguration()
        withClass.operationClass = ObservingOperation.self
        #expect(withClass.transport == .urlSession)
        var withSession = ImageDownloaderConfiguration()
        withSession.sessionConfiguration = .ephemeral
        #expect(withSession.transport == .urlSession)
        let downloader = ImageDownloader(configuration: withSession)
        defer { downloader.invalidate(cancelPendingOperations: true) }
        #expect(downloader.configuration.transport == .urlSession && downloader.session != nil)
        var explicit = withSession
        explicit.transport = .curl
        #expect(explicit.transport == .curl)
        explicit.transport = .urlSession
        var plain = ImageDownloaderConfiguration()
        plain.transport = .urlSession
        #expect(plain.transport == .urlSession && explicit.transport == .urlSession)
    }

    /// A response head cut before its end traps corelibs' URLSession ("Transfer completed, but there's no
    /// response": the process ends). On the default transport it is one retryable error, and with a retry the
    /// image arrives.
    @Test(.requires(.libcurl)) func aHeadCutBeforeItsEndIsAnErrorOnTheDefault() async throws {
        let server = FixtureServer.shared
        let tag = newTag()
        var configuration = ImageDownloaderConfiguration()
        configuration.imageCache = nil
        configuration.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0)
        let downloader = ImageDownloader(configuration: configuration)
        defer { downloader.invalidate(cancelPendingOperations: true) }
        let result = try await downloader.image(for: server.url("/resume/\(tag)/image.png?cut_in_header=1&tag=\(tag)"))
        #expect(result.data == (try FixtureServer.fixtureData("image.png")))
        #expect(result.metrics?.attemptCount == 2 && result.metrics?.httpVersion != nil)
        let failing = await downloader.imageResult(for: server.url("/resume/\(tag)-2/image.png?cut_in_header=1&cuts=5&tag=\(tag)"))
        guard case .failure(let failure) = failing else { Issue.record("a head cut twice succeeded"); return }
        #expect(failure.downloaderError?.caseName == "network\(URLError.networkConnectionLost.rawValue)")
        #expect("\(failure)" == "connection lost (the connection closed before the response was complete) (after 2 attempts)")
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// Loading libcurl, and the transport's life: unavailable library, invalidation with and without cancelling.
@Suite struct CurlLifecycleTests {
    let server = FixtureServer.shared

    @Test(.requires(.libcurl))
    func libraryVersionAndFeatures() throws {
        let info = try CurlAvailability.library.get()
        #expect(info.versionNumber >= 0x07_50_00)
        #expect(!info.version.isEmpty && info.summary.hasPrefix("libcurl \(info.version)"))
        #expect(info.supportsIPv6 && info.supportsGzip)
        #expect(ImageDownloaderTransport.curl.isAvailable && ImageDownloaderTransport.curl.unavailableReason == nil)
    }

    @Test func missingLibraryIsReportedWithAnInstallHint() {
        guard case .failure(let failure) = CurlAvailability.load("libcurl-does-not-exist.so.4") else {
            Issue.record("a library that does not exist loaded")
            return
        }
        #expect(failure.description.contains("libcurl-does-not-exist.so.4"))
        #expect(failure.description.contains("apt-get install libcurl4"))
    }

    /// Without libcurl a transfer completes (off any curl thread) with `.unsupportedOnPlatform`, never crashes.
    @Test func unavailableTransportFailsEachTransfer() async throws {
        let missing = CurlLibraryUnavailable(soname: "libcurl.so.4", reason: "not found")
        let transport = CurlTransport(settings: CurlTransportSettings(), library: .failure(missing))
        let client = RecordingTransferClient()
        transport.makeTransfer(TransferRequest(urlRequest: URLRequest(url: server.url("/images/tiny.png?tag=\(newTag())"))),
                               client: client).resume()
        await client.waitForCompletion()
        guard case .unsupportedOnPlatform(let why)? = client.error as? ImageDownloaderError else {
            Issue.record("got \(String(describing: client.error))")
            return
        }
        #expect(why.contains("apt-get install libcurl4"))
        #expect(client.events == [.complete(nil)])
        transport.invalidate(cancellingTransfers: true)
    }

    /// Invalidating with cancellation ends running transfers at once (no event), and later transfers fail.
    @Test(.requires(.libcurl))
    func invalidateCancellingTransfers() async throws {
        let harness = CurlHarness()
        let tag = newTag()
        let client = RecordingTransferClient()
        harness.start(server.url("/hold/curl-invalidate-\(tag)/tiny.png?tag=\(tag)&max=120"), client: client)
        await server.awaitRequests(tag: tag, count: 1)
        harness.transport.invalidate(cancellingTransfers: true)
        client.noteCancelReturned()
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(logged.first?.aborted == true)
        #expect(client.events.isEmpty)

        let late = await harness.run(server.url("/images/tiny.png?tag=\(tag)&late=1"))
        #expect(late.urlError?.code == .cancelled)
        #expect(server.requests(tag: tag).count == 1)
    }

    /// Invalidating without cancellation lets running transfers finish.
    @Test(.requires(.libcurl))
    func invalidateLettingTransfersFinish() async throws {
        let harness = CurlHarness()
        let tag = newTag()
        let hold = "curl-drain-\(tag)"
        let client = RecordingTransferClient()
        harness.start(server.url("/hold/\(hold)/tiny.png?tag=\(tag)&max=120"), client: client)
        await server.awaitRequests(tag: tag, count: 1)
        harness.transport.invalidate(cancellingTransfers: false)
        server.release(hold)
        await client.waitForCompletion()
        #expect(client.error == nil)
        #expect(client.body == (try FixtureServer.fixtureData("tiny.png")))
    }

    /// A transport released with a transfer running: the transfer still completes.
    @Test(.requires(.libcurl))
    func releasedTransportFinishesItsTransfers() async throws {
        let tag = newTag()
        let hold = "curl-release-\(tag)"
        let client = RecordingTransferClient()
        let transfer = Self.startOnAShortLivedTransport(server.url("/hold/\(hold)/tiny.png?tag=\(tag)&max=120"), client: client)
        await server.awaitRequests(tag: tag, count: 1)
        server.release(hold)
        await client.waitForCompletion()
        #expect(client.error == nil, "\(String(describing: client.error))")
        #expect(client.body.count > 0)
        withExtendedLifetime(transfer) {}
    }

    private static func startOnAShortLivedTransport(_ url: URL, client: RecordingTransferClient) -> any TransportTransfer {
        let transport = CurlTransport(settings: CurlTransportSettings())
        var request = TransferRequest(urlRequest: URLRequest(url: url))
        request.idleTimeout = 180  // the request is held until the test releases it
        let transfer = transport.makeTransfer(request, client: client)
        transfer.resume()
        return transfer  // the transport is released here
    }

    /// A request stopped by a cancel ends inside libcurl (CURLE_WRITE_ERROR) in the same pass that the cancel
    /// and a new transfer's start are handled: the new transfer gets the freed easy handle, and the old
    /// request's result must not end it (it did, with -1, before the driver handled commands first).
    @Test(.requires(.libcurl))
    func aCancelledRequestsResultNeverEndsTheTransferReusingItsHandle() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let server = self.server
        let first = RecordingTransferClient()
        let second = RecordingTransferClient()
        first.onResponse = { transfer, _ in
            transfer.cancel()
            harness.start(server.url("/images/tiny.png?tag=\(tag)&n=2"), client: second)
        }
        harness.start(server.url("/images/tiny.png?tag=\(tag)&n=1"), client: first)
        #expect(await second.waitForCompletion())
        #expect(second.error == nil, "got \(String(describing: second.error))")
        #expect(second.body == (try FixtureServer.fixtureData("tiny.png")))
        #expect(first.completionCount == 0)
    }
}

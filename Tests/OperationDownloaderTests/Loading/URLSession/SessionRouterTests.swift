import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The URLSession transport's router lets go of a transfer as soon as it ends, and of everything once the
/// transport is invalidated. A route kept for a task whose completion corelibs never reported (seen under load:
/// a cancelled task ended `.completed` with no delegate call) kept its operation, the transport and the
/// session alive (LeakTests failed about one full run in six).
@Suite struct SessionRouterTests {
    let server = FixtureServer.shared

    @Test func aCancelledTransferIsNoLongerRouted() async throws {
        let transport = URLSessionTransport(configuration: URLSessionTransport.standaloneConfiguration(idleTimeout: 180))
        defer { transport.invalidate(cancellingTransfers: true) }
        let tag = newTag()
        let client = RecordingTransferClient()
        var request = TransferRequest(urlRequest: URLRequest(url: server.url("/hold/\(tag)/tiny.png?tag=\(tag)&max=120")))
        request.idleTimeout = 180
        let transfer = transport.makeTransfer(request, client: client)
        transfer.resume()
        #expect(transport.router?.routeCount == 1)
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        transfer.cancel()
        #expect(transport.router?.routeCount == 0)
        server.release(tag)
        await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(client.events.isEmpty, "no event after cancel: \(client.events)")
    }

    @Test func invalidatingTheTransportForgetsEveryRoute() {
        let transport = URLSessionTransport(configuration: URLSessionTransport.standaloneConfiguration(idleTimeout: 180))
        let operation = ImageDownloaderOperation(
            request: URLRequest(url: server.url("/images/tiny.png")), session: nil, options: [], context: nil)
        transport.router?.register(operation)
        #expect(transport.router?.routeCount == 1)
        transport.invalidate(cancellingTransfers: false)
        #expect(transport.router?.routeCount == 0)
    }
}

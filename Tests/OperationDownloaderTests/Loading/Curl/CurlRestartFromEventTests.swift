import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// A client that cancels its transfer from inside the response event and starts another one on the same
/// transport (the operation does this when the HTTP cache refetches after a 304 that matches no stored
/// response). The cancelled transfer's easy handle goes back to the pool and is handed to the new transfer in
/// the same batch of commands: the new transfer must not inherit the old request's end ("Failed writing
/// received data", from the header callback that stopped it).
@Suite struct CurlRestartFromEventTests {
    let server = FixtureServer.shared

    @Test(.requires(.libcurl))
    func aTransferStartedFromTheResponseEventOfACancelledOneCompletes() async throws {
        let harness = CurlHarness()
        let tag = newTag()
        let expected = try FixtureServer.fixtureData("tiny.png")
        for round in 0..<5 {
            let second = RecordingTransferClient()
            let first = RecordingTransferClient()
            let url = server.url("/images/tiny.png?tag=\(tag)&round=\(round)")
            first.onResponse = { [weak first] transfer, _ in
                transfer.cancel()
                first?.noteCancelReturned()
                harness.start(url, client: second)
            }
            harness.start(url, client: first)
            await second.waitForCompletion()
            #expect(second.error == nil, "round \(round): \(String(describing: second.error))")
            #expect(second.body == expected)
            #expect(first.eventsAfterCancel.isEmpty && first.completionCount == 0)
        }
    }
}

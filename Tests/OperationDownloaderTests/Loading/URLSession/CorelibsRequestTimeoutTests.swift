#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import Testing

/// The corelibs fact `URLSessionTransfer` relies on to skip assigning the backstop (a copy of the shared
/// request): a request whose `timeoutInterval` was never assigned, only given to `URLRequest.init`, is timed by
/// the session's `timeoutIntervalForRequest`; once assigned, by its own. Told apart by the error, not by time:
/// the server holds the headers back for 20 s (or 3 s), then closes the connection, which fails as a lost
/// connection; only an armed 1 s timeout fails as `.timedOut`.
@Suite struct CorelibsRequestTimeoutTests {
    let server = FixtureServer.shared

    @Test func aRequestWhoseTimeoutWasNeverAssignedTakesTheSessions() async throws {
        let request = URLRequest(url: server.url("/stall?phase=headers&seconds=20&tag=\(newTag())"), timeoutInterval: 600)
        #expect(await failure(of: request, sessionTimeout: 1) == .timedOut)
    }

    @Test func anAssignedTimeoutWinsOverTheSessions() async throws {
        var request = URLRequest(url: server.url("/stall?phase=headers&seconds=20&tag=\(newTag())"))
        request.timeoutInterval = 1
        #expect(await failure(of: request, sessionTimeout: 600) == .timedOut)
    }

    @Test func theInitializersTimeoutIsNotArmed() async throws {
        let request = URLRequest(url: server.url("/stall?phase=headers&seconds=3&tag=\(newTag())"), timeoutInterval: 1)
        let code = await failure(of: request, sessionTimeout: 600)
        #expect(code != nil && code != .timedOut, "got \(String(describing: code))")
    }

    /// The URLError code the request fails with on a session with `sessionTimeout` (nil: it did not fail).
    private func failure(of request: URLRequest, sessionTimeout: TimeInterval) async -> URLError.Code? {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = sessionTimeout
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        return await withCheckedContinuation { continuation in
            session.dataTask(with: request) { _, _, error in
                continuation.resume(returning: error.map { ($0 as? URLError)?.code ?? .unknown })
            }.resume()
        }
    }
}
#endif

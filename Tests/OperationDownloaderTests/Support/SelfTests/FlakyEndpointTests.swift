import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The fixture server's `/flaky/<key>/<file>` (for the retry tests of issue 16): the first N requests per key
/// fail (a status with an optional Retry-After, or a reset after the headers), the later ones succeed.
@Suite struct FlakyEndpointTests {
    let server = FixtureServer.shared
    let client = FixtureHTTPClient.shared

    @Test func failsNTimesWithTheStatusAndRetryAfterThenServesTheFile() async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/tiny.png?fail=2&status=429&retry_after=3&tag=\(tag)")
        let first = await client.fetch(url)
        let second = await client.fetch(url)
        let third = await client.fetch(url)
        #expect(first.status == 429 && second.status == 429)
        #expect(first.response?.value(forHTTPHeaderField: "Retry-After") == "3")
        #expect(third.status == 200)
        let tiny = try FixtureServer.fixtureData("tiny.png")
        #expect(third.data == tiny)
        #expect(third.response?.value(forHTTPHeaderField: "Retry-After") == nil)
        #expect(server.stats(tag: tag).count == 3)
    }

    @Test func defaultsTo503OnceAndKeysAreIndependent() async throws {
        let tag = newTag()
        let a = await client.fetch(server.url("/flaky/\(tag)-a/tiny.png?tag=\(tag)"))
        let b = await client.fetch(server.url("/flaky/\(tag)-b/tiny.png?tag=\(tag)"))
        let a2 = await client.fetch(server.url("/flaky/\(tag)-a/tiny.png?tag=\(tag)"))
        #expect(a.status == 503 && b.status == 503 && a2.status == 200)
    }

    /// What URLSession on Linux makes of a reset right after the headers: the code the retry rules see.
    @Test func resetAfterTheHeadersIsAConnectionLostError() async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/baseline.jpg?fail=1&mode=reset&tag=\(tag)")
        let failed = await client.fetch(url)
        #expect(failed.error?.code == .networkConnectionLost, "\(String(describing: failed.error))")
        #expect(failed.data.isEmpty)
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true).first
        #expect(logged?.aborted == true)
        let succeeded = await client.fetch(url)
        let baseline = try FixtureServer.fixtureData("baseline.jpg")
        #expect(succeeded.status == 200 && succeeded.data == baseline)
    }
}

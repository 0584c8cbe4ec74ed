import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

extension FixtureServerTests {
    // MARK: /status

    @Test func statusCodesAndBodies() async throws {
        let notFound = await client.fetch(server.url("/status/404?tag=\(tag)&body=nope"))
        #expect(notFound.error == nil)
        #expect(notFound.status == 404)
        #expect(String(decoding: notFound.data, as: UTF8.self) == "nope")
        let failure = await client.fetch(server.url("/status/500?tag=\(tag)"))
        #expect(failure.status == 500)
        #expect(String(decoding: failure.data, as: UTF8.self) == "status 500")
        #expect(failure.response?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain") == true)
        let noContent = await client.fetch(server.url("/status/204?tag=\(tag)"))
        #expect(noContent.status == 204)
        #expect(noContent.data.isEmpty)
        let bad = await client.fetch(server.url("/status/abc?tag=\(tag)"))
        #expect(bad.status == 400)
        // A plain 401 without WWW-Authenticate: no challenge, the status arrives (and nothing hangs).
        let unauthorized = await client.fetch(server.url("/status/401?tag=\(tag)"))
        #expect(unauthorized.status == 401)
        #expect(await server.awaitRequests(tag: tag, count: 5, finished: true).map(\.status) == [404, 500, 204, 400, 401])
    }

    // MARK: /redirect

    @Test func redirectChainEndsAtTarget() async throws {
        let target = Self.encoded("/images/tiny.png?tag=\(tag)")
        let result = await client.fetch(server.url("/redirect/3?tag=\(tag)&to=\(target)"))
        #expect(result.error == nil)
        #expect(result.status == 200)
        #expect(result.data == (try fixture("tiny.png")))
        #expect(result.response?.url?.path == "/images/tiny.png")
        let log = await server.awaitRequests(tag: tag, count: 5, finished: true)
        #expect(log.map(\.path) == ["/redirect/3", "/redirect/2", "/redirect/1", "/redirect/0", "/images/tiny.png"])
        #expect(log.map(\.status) == [302, 302, 302, 302, 200])
    }

    @Test func redirectToAnotherHostName() async throws {
        let target = Self.encoded(server.localhostURL("/images/tiny.png?tag=\(tag)").absoluteString)
        let result = await client.fetch(server.url("/redirect/1?tag=\(tag)&to=\(target)"))
        #expect(result.status == 200)
        #expect(result.response?.url?.host == "localhost")
        let log = server.requests(tag: tag)
        #expect(log.first?.headers["host"]?.hasPrefix("127.0.0.1:") == true)
        #expect(log.last?.headers["host"]?.hasPrefix("localhost:") == true)
    }

    @Test func longRedirectChainFailsInTheClient() async throws {
        let target = Self.encoded("/images/tiny.png?tag=\(tag)")
        let result = await client.fetch(server.url("/redirect/60?tag=\(tag)&to=\(target)"))
        #expect(result.error != nil)
        let arrived = server.requests(tag: tag).count
        let log = await server.awaitRequests(tag: tag, count: arrived, finished: true)
        #expect(log.count < 60)
        #expect(log.allSatisfy { $0.status == 302 })
    }

    // MARK: /basic-auth

    @Test func basicAuthWithoutCredentialIs401() async throws {
        let result = await client.fetch(server.url("/basic-auth/user/pass/tiny.png?tag=\(tag)"))
        #expect(result.statuses.first == 401)
        let challenge = server.requests(tag: tag).first
        #expect(challenge?.status == 401)
        #expect(challenge?.headers["authorization"] == nil)
    }

    @Test func basicAuthWithCredentialServesTheFile() async throws {
        let credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
        let result = await client.fetch(server.url("/basic-auth/user/pass/tiny.png?tag=\(tag)"), credential: credential)
        #expect(result.status == 200)
        #expect(result.data == (try fixture("tiny.png")))
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(log.map(\.status) == [401, 200])
        #expect(log.last?.headers["authorization"] == "Basic dXNlcjpwYXNz")
        let direct = await client.fetch(
            server.url("/basic-auth/user/pass/tiny.png?tag=\(tag)"), headers: ["Authorization": "Basic dXNlcjpwYXNz"])
        #expect(direct.statuses == [200])
        let wrong = await client.fetch(
            server.url("/basic-auth/user/pass/tiny.png?tag=\(tag)"), headers: ["Authorization": "Basic d3Jvbmc6d3Jvbmc="])
        #expect(wrong.statuses.first == 401)
    }

    // MARK: Broken connections

    @Test func resetMidBodyIsAnError() async throws {
        let result = await client.fetch(server.url("/reset/baseline.jpg?tag=\(tag)&after=1000"))
        #expect(result.error != nil)
        #expect(result.data.count <= 1000)
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true).first
        #expect(logged?.aborted == true)
        #expect(logged?.bytesSent == 1000)
    }

    @Test func finMidBodyIsAnError() async throws {
        let result = await client.fetch(server.url("/fin/baseline.jpg?tag=\(tag)&after=1000"))
        #expect(result.error != nil)
        #expect(result.data.count <= 1000)
        #expect(await server.awaitRequests(tag: tag, count: 1, finished: true).first?.aborted == true)
    }

    @Test func stallBeforeHeadersThenCloseIsAnError() async throws {
        let result = await client.fetch(server.url("/stall?tag=\(tag)&phase=headers&seconds=0.3"))
        #expect(result.error != nil)
        #expect(result.response == nil)
        #expect(server.requests(tag: tag).first?.status == nil)
    }

    @Test func stallInBodyThenCloseIsAnError() async throws {
        let original = try fixture("baseline.jpg")
        let result = await client.fetch(server.url("/stall?tag=\(tag)&phase=body&seconds=0.3&file=baseline.jpg"))
        #expect(result.status == 200)
        #expect(result.error != nil)
        #expect(result.data.count == original.count / 2)
        #expect(result.data == original.prefix(original.count / 2))
    }

    @Test func serverNoticesAClientThatTimesOut() async throws {
        // The client gives up after 1 s of silence; the server's 30 s stall must end soon after that.
        let result = await client.fetch(server.url("/stall?tag=\(tag)&phase=headers&seconds=30"), timeout: 1)
        #expect(result.error?.code == .timedOut)
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true).first
        #expect(logged?.aborted == true)
    }

    @Test func garbageIsAnError() async throws {
        let result = await client.fetch(server.url("/garbage?tag=\(tag)"))
        #expect(result.error != nil)
        #expect(result.status == nil)
    }

    // MARK: /bytes

    @Test func bytesHaveTheRequestedLengthAndPattern() async throws {
        let count = 1_000_003
        let result = await client.fetch(server.url("/bytes?tag=\(tag)&n=\(count)&ct=image/x-test"))
        #expect(result.error == nil)
        #expect(result.data.count == count)
        #expect(result.response?.value(forHTTPHeaderField: "Content-Type") == "image/x-test")
        #expect(result.response?.expectedContentLength == Int64(count))
        let matches = result.data.enumerated().allSatisfy { index, byte in Int(byte) == index % 251 }
        #expect(matches)
        let empty = await client.fetch(server.url("/bytes?tag=\(tag)&n=0"))
        #expect(empty.status == 200)
        #expect(empty.data.isEmpty)
    }

    @Test func chunkedBytesHaveNoContentLength() async throws {
        let result = await client.fetch(server.url("/bytes?tag=\(tag)&n=200000&chunked=1"))
        #expect(result.error == nil)
        #expect(result.data.count == 200_000)
        #expect(result.response?.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(result.response?.value(forHTTPHeaderField: "Transfer-Encoding")?.lowercased() == "chunked")
        #expect(result.response?.expectedContentLength == -1)
    }

    @Test func lyingContentLength() async throws {
        let longer = await client.fetch(server.url("/bytes?tag=\(tag)&n=1000&lie=5000"))
        #expect(longer.response?.expectedContentLength == 5000)
        #expect(longer.error != nil)  // the connection closes with 4000 bytes missing
        let shorter = await client.fetch(server.url("/bytes?tag=\(tag)&n=1000&lie=500"))
        #expect(shorter.response?.expectedContentLength == 500)
        #expect(shorter.data.count == 500)  // the extra bytes are not part of the response
    }

    @Test func largeBodyStopsQuietlyWhenTheClientGoesAway() async throws {
        let count = 64 * 1024 * 1024
        let result = await client.fetch(server.url("/bytes?tag=\(tag)&n=\(count)"), cancelAfterBytes: 256 * 1024)
        #expect(result.data.count >= 256 * 1024)
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true).first
        #expect((logged?.bytesSent ?? Int.max) <= count)
        // The server is still healthy.
        let after = await client.fetch(server.url("/images/tiny.png?tag=\(tag)"))
        #expect(after.status == 200)
    }

    // MARK: Other endpoints

    @Test func htmlEmptyAndNotFound() async throws {
        let html = await client.fetch(server.url("/html?tag=\(tag)"))
        #expect(html.status == 200)
        #expect(html.response?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/html") == true)
        #expect(String(decoding: html.data, as: UTF8.self).contains("<html>"))
        let empty = await client.fetch(server.url("/empty?tag=\(tag)"))
        #expect(empty.error == nil)
        #expect(empty.status == 200)
        #expect(empty.response?.value(forHTTPHeaderField: "Content-Type") == "image/png")
        #expect(empty.data.isEmpty)
        let unknown = await client.fetch(server.url("/no/such/endpoint?tag=\(tag)"))
        #expect(unknown.status == 404)
    }

    private struct CookieEcho: Decodable {
        let cookie: String?
        let cookies: [String: String]
    }

    @Test func cookiesAreSetAndEchoed() async throws {
        let set = await client.fetch(server.url("/cookies/set?tag=\(tag)&name=flavour&value=oat"))
        #expect(set.status == 200)
        #expect(set.response?.value(forHTTPHeaderField: "Set-Cookie") == "flavour=oat; Path=/")
        let echo = await client.fetch(server.url("/cookies/echo?tag=\(tag)"), headers: ["Cookie": "flavour=oat; size=big"])
        let decoded = try JSONDecoder().decode(CookieEcho.self, from: echo.data)
        #expect(decoded.cookie == "flavour=oat; size=big")
        #expect(decoded.cookies == ["flavour": "oat", "size": "big"])
        let none = await client.fetch(server.url("/cookies/echo?tag=\(tag)"))
        #expect(try JSONDecoder().decode(CookieEcho.self, from: none.data).cookie == nil)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// The curl transport on its own, driven by a recording client against the fixture server: responses,
/// bodies, redirects and challenges through the seam, cancel, and the size limit.
@Suite(.requires(.libcurl))
struct CurlTransportTests {
    let server = FixtureServer.shared

    @Test func bodyArrivesWithResponseAndMetrics() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = await harness.run(server.url("/images/baseline.jpg?tag=\(tag)"))
        #expect(client.error == nil)
        #expect(client.body == (try FixtureServer.fixtureData("baseline.jpg")))
        #expect(client.events.first == .response(200))
        #expect(client.events.last == .complete(nil))
        let response = try #require(client.lastResponse)
        #expect(response.expectedContentLength == 70522)
        #expect(response.value(forHTTPHeaderField: "content-type") == "image/jpeg")
        let metrics = try #require(client.metrics)
        #expect(metrics.httpVersion == "1.1")
        #expect(metrics.remoteAddress == "127.0.0.1")
        #expect(metrics.remotePort == server.port)
        #expect(metrics.connectionReused == false)
        #expect(metrics.requestsSent == 1)
        #expect(metrics.bytesReceived == 70522)
        #expect((metrics.totalDuration ?? 0) > 0)
        #expect(metrics.connectDuration != nil && metrics.timeToFirstByte != nil)
        #expect(metrics.secureConnectionDuration == nil)
        #expect(client.overlappingEvents == 0)
        #expect(client.threads == ["od-curl"], "events on the curl thread")
        let logged = server.requests(tag: tag)
        #expect(logged.count == 1)
        #expect(logged.first?.headers["accept-encoding"]?.contains("gzip") == true)

        // The next transfer reuses the kept-alive connection.
        let second = await harness.run(server.url("/images/tiny.png?tag=\(tag)"))
        #expect(second.metrics?.connectionReused == true)
        #expect(second.metrics?.connectDuration == nil)
    }

    @Test func requestHeadersAndMethodAreSentAsGiven() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        _ = await harness.run(server.url("/images/tiny.png?tag=\(tag)")) { request in
            request.urlRequest.setValue("image/*", forHTTPHeaderField: "Accept")
            request.urlRequest.setValue("test-agent/1", forHTTPHeaderField: "User-Agent")
            request.urlRequest.setValue("", forHTTPHeaderField: "X-Empty")
        }
        let head = await harness.run(server.url("/images/tiny.png?tag=\(tag)&head=1")) { request in
            request.urlRequest.httpMethod = "HEAD"
        }
        #expect(head.receivedBytes == 0 && head.error == nil)
        let logged = server.requests(tag: tag)
        #expect(logged.first?.headers["accept"] == "image/*")
        #expect(logged.first?.headers["user-agent"] == "test-agent/1")
        #expect(logged.first?.headers["x-empty"] == "")
        #expect(logged.last?.method == "HEAD")
    }

    @Test func dripAndChunkedBodiesArriveWhole() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let drip = await harness.run(server.url("/drip/image.png?chunk=4096&delay_ms=5&tag=\(newTag())"))
        #expect(drip.body == (try FixtureServer.fixtureData("image.png")))
        let events = drip.events
        #expect(events.count == 3, "response, data (merged), completion: \(events)")

        let chunked = await harness.run(server.url("/bytes?n=300000&chunked=1&tag=\(newTag())"))
        #expect(chunked.error == nil)
        #expect(chunked.lastResponse?.expectedContentLength == -1)
        #expect(chunked.body.count == 300_000)
        #expect(chunked.body.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
    }

    /// gzip is decoded by libcurl; expectedContentLength stays the compressed length, as with URLSession.
    @Test func gzipIsDecoded() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let client = await harness.run(server.url("/images/baseline.jpg?gzip=1&tag=\(newTag())"))
        let original = try FixtureServer.fixtureData("baseline.jpg")
        #expect(client.body == original)
        let response = try #require(client.lastResponse)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(response.expectedContentLength > 0 && response.expectedContentLength != Int64(original.count))
    }

    // MARK: - Redirects

    @Test func redirectsAreAskedAndFollowed() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let final = "/images/tiny.png?tag=\(tag)".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let client = await harness.run(server.url("/redirect/2?tag=\(tag)&code=307&to=\(final)"))
        #expect(client.error == nil)
        #expect(client.body == (try FixtureServer.fixtureData("tiny.png")))
        let redirects = client.events.filter { if case .redirect = $0 { return true } else { return false } }
        #expect(redirects.count == 3)
        #expect(redirects.first.map { if case .redirect(307, let to) = $0 { to.contains("/redirect/1?") } else { false } } == true)
        #expect(client.events.filter { $0 == .response(200) }.count == 1)
        #expect(!client.events.contains(.response(307)), "a followed redirect is not a response")
        let logged = server.requests(tag: tag)
        #expect(logged.map(\.path) == ["/redirect/2", "/redirect/1", "/redirect/0", "/images/tiny.png"])
        // Followed over the same kept-alive connection.
        #expect(client.metrics?.connectionReused == true)
    }

    @Test func refusedRedirectIsTheFinalResponse() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = RecordingTransferClient()
        client.redirectDecision = { _, _ in nil }
        _ = await harness.run(server.url("/redirect/1?tag=\(tag)"), client: client)
        #expect(client.error == nil)
        #expect(client.events.first == .redirect(from: 302, to: server.url("/redirect/0?tag=\(tag)").absoluteString))
        #expect(client.events.contains(.response(302)))
        #expect(String(decoding: client.body, as: UTF8.self).hasPrefix("redirecting to"))
        #expect(server.requests(tag: tag).count == 1)
    }

    @Test func redirectCanBeRewrittenByTheClient() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = RecordingTransferClient()
        let other = server.url("/images/image.png?tag=\(tag)&rewritten=1")
        client.redirectDecision = { _, proposed in
            var request = proposed
            request.url = other
            request.setValue("yes", forHTTPHeaderField: "X-Rewritten")
            return request
        }
        _ = await harness.run(server.url("/redirect/0?tag=\(tag)"), client: client)
        #expect(client.body == (try FixtureServer.fixtureData("image.png")))
        let last = server.requests(tag: tag).last
        #expect(last?.query["rewritten"] == "1" && last?.headers["x-rewritten"] == "yes")
    }

    /// A client that follows every redirect (the operation stops at 20) still ends: the transport's backstop.
    @Test func endlessRedirectsHitTheBackstop() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = await harness.run(server.url("/loop?tag=\(tag)"), client: RecordingTransferClient(keepsBody: false))
        #expect(client.urlError?.code == .httpTooManyRedirects)
        #expect(server.requests(tag: tag).count == 65)
    }

    @Test func seeOtherTurnsAPostIntoAGet() {
        var post = URLRequest(url: URL(string: "http://a/x")!)
        post.httpMethod = "POST"
        post.httpBody = Data("x".utf8)
        post.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let target = URL(string: "http://a/y")!
        let seeOther = CurlTransfer.redirectRequest(from: post, to: target, status: 303)
        #expect(seeOther.httpMethod == "GET" && seeOther.httpBody == nil && seeOther.value(forHTTPHeaderField: "Content-Type") == nil)
        let temporary = CurlTransfer.redirectRequest(from: post, to: target, status: 307)
        #expect(temporary.httpMethod == "POST" && temporary.httpBody == post.httpBody && temporary.url == target)
    }

    // MARK: - Authentication

    @Test func basicChallengeIsAnsweredOnce() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = RecordingTransferClient()
        client.credential = { challenge in
            challenge.previousFailureCount == 0 ? URLCredential(user: "user", password: "secret", persistence: .none) : nil
        }
        _ = await harness.run(server.url("/basic-auth/user/secret/tiny.png?tag=\(tag)"), client: client)
        #expect(client.error == nil)
        #expect(client.body == (try FixtureServer.fixtureData("tiny.png")))
        let events = client.events
        let challenge = TransferChallenge(
            host: "127.0.0.1", port: server.port, authenticationMethod: NSURLAuthenticationMethodHTTPBasic,
            realm: "fixture", previousFailureCount: 0)
        // The 401 and its body first, then the challenge, then the retry's response.
        #expect(events.first == .response(401))
        #expect(events.contains(.challenge(challenge)))
        #expect(events.filter { $0 == .response(200) }.count == 1)
        let logged = server.requests(tag: tag)
        #expect(logged.count == 2)
        #expect(logged.first?.headers["authorization"] == nil)
        #expect(logged.last?.headers["authorization"] == "Basic dXNlcjpzZWNyZXQ=")
    }

    @Test func refusedChallengeLeavesTheFinal401() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = await harness.run(server.url("/basic-auth/user/secret/tiny.png?tag=\(tag)"))
        #expect(client.error == nil)
        #expect(client.lastResponse?.statusCode == 401)
        #expect(String(decoding: client.body, as: UTF8.self) == "unauthorized")
        #expect(server.requests(tag: tag).count == 1)

        // A credential that never works: asked again with previousFailureCount 1, then refused.
        let looping = RecordingTransferClient()
        looping.credential = { $0.previousFailureCount == 0 ? URLCredential(user: "u", password: "p", persistence: .none) : nil }
        let loopTag = newTag()
        _ = await harness.run(server.url("/auth-loop/tiny.png?tag=\(loopTag)"), client: looping)
        let counts = looping.events.compactMap { event -> Int? in
            if case .challenge(let challenge) = event { return challenge.previousFailureCount } else { return nil }
        }
        #expect(counts == [0, 1])
        #expect(looping.lastResponse?.statusCode == 401)
        #expect(server.requests(tag: loopTag).count == 2)
    }

    @Test func challengeParsing() {
        #expect(CurlResponseHead.basicRealm(in: "Basic realm=\"fixture\"") == ("fixture", true))
        #expect(CurlResponseHead.basicRealm(in: "Bearer realm=\"a, Basic b\", error=x, basic realm=z") == ("z", true))
        #expect(CurlResponseHead.basicRealm(in: "Digest realm=\"x\", nonce=\"y\"").found == false)
        #expect(CurlResponseHead.basicRealm(in: "Basic") == (nil, true))
        #expect(CurlResponseHead.basicRealm(in: "Basically realm=x").found == false)
    }

    // MARK: - Cancel

    /// Cancelled from inside a data event (on the curl thread) and from another thread: no event begins
    /// after cancel() returns, and the server sees the client go away.
    @Test(arguments: [true, false])
    func cancelMidBodyIsImmediate(fromEvent: Bool) async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = RecordingTransferClient()
        let firstData = Completion()
        let cancelled = Completion()
        client.onData = { [weak client] transfer, _ in  // weak: the client keeps this closure
            if fromEvent, !cancelled.isDone {
                transfer.cancel()
                client?.noteCancelReturned()
                cancelled.signal()
            }
            firstData.signal()
        }
        // The drip holds after 8 KB (until the test ends it by cancelling), so the body cannot finish first.
        let hold = "curl-cancel-body-\(tag)"
        let transfer = harness.start(
            server.url("/drip/baseline.jpg?chunk=1024&delay_ms=1&hold=\(hold)&hold_at=8192&max=120&tag=\(tag)"), client: client)
        #expect(await firstData.wait(timeout: 30))
        if !fromEvent {
            transfer.cancel()
            client.noteCancelReturned()
        }
        // The server notices the closed connection at its next write.
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(logged.first?.aborted == true)
        #expect((logged.first?.bytesSent ?? .max) <= 8192)
        // A later transfer on the same transport runs normally, and only then are events checked.
        let next = await harness.run(server.url("/images/tiny.png?tag=\(tag)&next=1"))
        #expect(next.error == nil)
        #expect(client.eventsAfterCancel.isEmpty, "events after cancel: \(client.eventsAfterCancel)")
        #expect(client.completionCount == 0)
        transfer.cancel()  // a second cancel is harmless
    }

    @Test func cancelBeforeResumeSendsNothing() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = RecordingTransferClient()
        let transfer = harness.transport.makeTransfer(
            TransferRequest(urlRequest: URLRequest(url: server.url("/images/tiny.png?tag=\(tag)"))), client: client)
        transfer.cancel()
        transfer.resume()
        _ = await harness.run(server.url("/images/tiny.png?tag=\(tag)&after=1"))
        #expect(client.events.isEmpty)
        #expect(server.requests(tag: tag).map { $0.query["after"] } == ["1"])
    }

    @Test func cancelWhileHeldBeforeTheResponse() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let hold = "curl-cancel-\(tag)"
        let client = RecordingTransferClient()
        let transfer = harness.start(server.url("/hold/\(hold)/tiny.png?tag=\(tag)&max=120"), client: client)
        await server.awaitRequests(tag: tag, count: 1)
        transfer.cancel()
        client.noteCancelReturned()
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(logged.first?.aborted == true)
        #expect(client.events.isEmpty)
    }

    // MARK: - Size limit

    @Test func sizeLimitStopsAtTheAnnouncedLength() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = await harness.run(server.url("/bytes?n=1073741824&tag=\(tag)"), client: RecordingTransferClient(keepsBody: false)) {
            $0.maximumResponseSize = 1_000_000
        }
        #expect(client.urlError?.code == .dataLengthExceedsMaximum)
        #expect(client.events.first == .response(200))
        #expect(client.receivedBytes == 0)
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(logged.first?.aborted == true)
    }

    @Test func sizeLimitStopsAtTheByte() async throws {
        let harness = CurlHarness { $0.receiveBufferSize = 16 * 1024 }
        defer { harness.invalidate() }
        let client = await harness.run(server.url("/bytes?n=1073741824&chunked=1&tag=\(newTag())"), client: RecordingTransferClient(keepsBody: false)) {
            $0.maximumResponseSize = 1_000_000
        }
        #expect(client.urlError?.code == .dataLengthExceedsMaximum)
        // The chunk that crosses the limit is delivered (the operation's own check names the limit), no more.
        #expect(client.receivedBytes > 1_000_000 && client.receivedBytes <= 1_000_000 + 16 * 1024)

        let bomb = await harness.run(server.url("/gzip-bomb?n=1073741824&tag=\(newTag())"), client: RecordingTransferClient(keepsBody: false)) {
            $0.maximumResponseSize = 4_000_000
        }
        #expect(bomb.urlError?.code == .dataLengthExceedsMaximum)
        #expect(bomb.receivedBytes <= 4_000_000 + 16 * 1024)
    }
}

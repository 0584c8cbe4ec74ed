import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Self-tests of the fixture server (Tests/Support/fixture_server.py) with plain URLSession, so that the
/// downloader's tests can trust what it serves and logs. Every test uses its own tag.
@Suite struct FixtureServerTests {
    let server = FixtureServer.shared
    let client = FixtureHTTPClient.shared
    let tag = UUID().uuidString

    func fixture(_ name: String) throws -> Data {
        try FixtureServer.fixtureData(name)
    }

    static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    /// Whether `process` exits within `seconds` (a bound against hangs, not a timing assertion): a thread of its
    /// own waits for the exit, and the test waits for that thread.
    func exits(_ process: Process, within seconds: TimeInterval) async -> Bool {
        await offCooperativePool {
            let exited = DispatchSemaphore(value: 0)
            Thread {
                process.waitUntilExit()
                exited.signal()
            }.start()
            return exited.wait(timeout: .now() + seconds) == .success
        }
    }

    // MARK: /images

    @Test func imageServesFileWithValidators() async throws {
        let result = await client.fetch(server.url("/images/baseline.jpg?tag=\(tag)"))
        let response = try #require(result.response)
        #expect(result.error == nil)
        #expect(response.statusCode == 200)
        #expect(result.data == (try fixture("baseline.jpg")))
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "image/jpeg")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == String(result.data.count))
        let etag = try #require(response.value(forHTTPHeaderField: "ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
        #expect(response.value(forHTTPHeaderField: "Last-Modified") != nil)
    }

    @Test func contentTypeFollowsExtension() async throws {
        let expected = [
            "progressive.jpg": "image/jpeg", "image.png": "image/png", "adam7.png": "image/png",
            "animated.gif": "image/gif", "image.webp": "image/webp", "image@2x.png": "image/png",
            "tiny.png": "image/png", "corrupt.jpg": "image/jpeg",
        ]
        for (name, type) in expected {
            let encodedName = try #require(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed))
            let result = await client.fetch(server.url("/images/\(encodedName)?tag=\(tag)"))
            #expect(result.status == 200, "\(name)")
            #expect(result.response?.value(forHTTPHeaderField: "Content-Type") == type, "\(name)")
            #expect(result.data == (try fixture(name)), "\(name)")
        }
    }

    @Test func ifNoneMatchGives304WithoutBody() async throws {
        let first = await client.fetch(server.url("/images/tiny.png?tag=\(tag)"))
        let etag = try #require(first.response?.value(forHTTPHeaderField: "ETag"))
        let second = await client.fetch(server.url("/images/tiny.png?tag=\(tag)"), headers: ["If-None-Match": etag])
        #expect(second.error == nil)
        #expect(second.status == 304)
        #expect(second.data.isEmpty)
        #expect(second.response?.value(forHTTPHeaderField: "ETag") == etag)
        let other = await client.fetch(server.url("/images/tiny.png?tag=\(tag)"), headers: ["If-None-Match": "\"other\""])
        #expect(other.status == 200)
        #expect(other.data == (try fixture("tiny.png")))
        let log = await server.awaitRequests(tag: tag, count: 3, finished: true)
        #expect(log.map(\.status) == [200, 304, 200])
        #expect(log.dropFirst().first?.headers["if-none-match"] == etag)
    }

    @Test func ifModifiedSinceGives304() async throws {
        let first = await client.fetch(server.url("/images/image.png?tag=\(tag)"))
        let lastModified = try #require(first.response?.value(forHTTPHeaderField: "Last-Modified"))
        let second = await client.fetch(server.url("/images/image.png?tag=\(tag)"), headers: ["If-Modified-Since": lastModified])
        #expect(second.status == 304)
        #expect(second.data.isEmpty)
        let old = await client.fetch(
            server.url("/images/image.png?tag=\(tag)"), headers: ["If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"])
        #expect(old.status == 200)
    }

    @Test func queryOverridesHeaders() async throws {
        let url = server.url("/images/tiny.png?tag=\(tag)&cc=max-age%3D60&ct=application/x-test&etag=v1&setcookie=session%3Dabc")
        let result = await client.fetch(url)
        let response = try #require(result.response)
        #expect(response.value(forHTTPHeaderField: "Cache-Control") == "max-age=60")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/x-test")
        #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(response.value(forHTTPHeaderField: "Set-Cookie")?.hasPrefix("session=abc") == true)
        let revalidated = await client.fetch(server.url("/images/tiny.png?tag=\(tag)&etag=v1"), headers: ["If-None-Match": "\"v1\""])
        #expect(revalidated.status == 304)
    }

    @Test func expiresAndDelayedResponse() async throws {
        let result = await client.fetch(server.url("/images/tiny.png?tag=\(tag)&expires=-60&delay_ms=100"))
        #expect(result.status == 200)
        let expires = try #require(result.response?.value(forHTTPHeaderField: "Expires"))
        #expect(expires.hasSuffix("GMT"))
        let logged = try #require(await server.awaitRequests(tag: tag, count: 1, finished: true).first)
        #expect(logged.query["delay_ms"] == "100")
        #expect(logged.aborted == false)
    }

    @Test func gzipBodyIsDecodedTransparently() async throws {
        // README.md is text: it compresses well, so the wire size shows that gzip was applied.
        let original = try fixture("README.md")
        let result = await client.fetch(server.url("/images/README.md?tag=\(tag)&gzip=1"))
        #expect(result.status == 200)
        #expect(result.data == original)
        #expect(result.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        let logged = try #require(await server.awaitRequests(tag: tag, count: 1, finished: true).first)
        #expect(logged.headers["accept-encoding"]?.contains("gzip") == true)
        #expect((logged.bytesSent ?? 0) > 0)
        #expect((logged.bytesSent ?? Int.max) < original.count)
        let image = await client.fetch(server.url("/images/image.png?tag=\(tag)&gzip=1"))
        #expect(image.data == (try fixture("image.png")))
    }

    @Test func missingFixtureIs404() async throws {
        let result = await client.fetch(server.url("/images/no-such-file.png?tag=\(tag)"))
        #expect(result.status == 404)
        let traversal = await client.fetch(server.url("/images/..%2Ffixture_server.py?tag=\(tag)"))
        #expect(traversal.status == 404)
    }

    @Test func headHasHeadersButNoBody() async throws {
        let result = await client.fetch(server.url("/images/tiny.png?tag=\(tag)"), method: "HEAD")
        #expect(result.status == 200)
        #expect(result.data.isEmpty)
        #expect(result.response?.value(forHTTPHeaderField: "Content-Length") == "70")
        #expect(server.requests(tag: tag).first?.method == "HEAD")
    }

    // MARK: Log and statistics

    @Test func logIsFilteredByTagAndRecordsTheRequest() async throws {
        let otherTag = UUID().uuidString
        _ = await client.fetch(server.url("/images/tiny.png?tag=\(tag)&extra=1"), headers: ["X-Fixture-Probe": "first"])
        _ = await client.fetch(server.url("/status/404?tag=\(otherTag)"))
        _ = await client.fetch(server.url("/images/image.png?tag=\(tag)"), headers: ["X-Fixture-Probe": "second"])
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(log.map(\.path) == ["/images/tiny.png", "/images/image.png"])
        #expect(log.map(\.status) == [200, 200])
        #expect(log.map { $0.headers["x-fixture-probe"] } == ["first", "second"])
        #expect(log.first?.query == ["tag": tag, "extra": "1"])
        #expect(log.allSatisfy { $0.method == "GET" && $0.aborted == false })
        #expect(log.allSatisfy { entry in entry.finished.map { $0 >= entry.started } == true })
        #expect(log.first?.bytesSent == 70)
        let other = server.requests(tag: otherTag)
        #expect(other.map(\.path) == ["/status/404"])
        #expect(other.first?.status == 404)
        // Control calls are not logged: reading the log twice does not change it.
        #expect(server.requests(tag: tag).count == 2)
        #expect(server.stats(tag: tag).count == 2)
        #expect(server.requests(tag: UUID().uuidString).isEmpty)
    }

    /// The long poll behind `awaitRequests` (`/_log?wait=`): it answers once the log meets its condition, and at
    /// its bound with the log as it is when the requests never come (the caller then reports what was missing).
    @Test func logLongPollAnswersWhenMetOrAtItsBound() async throws {
        _ = await client.fetch(server.url("/images/tiny.png?tag=\(tag)"))
        let met = await client.fetch(server.url("/_log?tag=\(tag)&count=1&finished=1&wait=60"))
        #expect(met.status == 200)
        let log = try JSONDecoder().decode([LoggedRequest].self, from: met.data)
        #expect(log.map(\.path) == ["/images/tiny.png"])
        #expect(log.first?.finished != nil)

        let never = await client.fetch(server.url("/_log?tag=\(UUID().uuidString)&count=1&wait=0.5"))
        #expect(never.status == 200)
        #expect(try JSONDecoder().decode([LoggedRequest].self, from: never.data).isEmpty)
        for query in ["count=one&wait=1", "count=1&wait=nan", "count=1&wait=soon"] {
            #expect(await client.fetch(server.url("/_log?tag=\(tag)&\(query)")).status == 400, "\(query)")
        }
    }

    @Test func sequentialRequestsHaveConcurrencyOne() async throws {
        for _ in 0..<3 {
            _ = await client.fetch(server.url("/images/tiny.png?tag=\(tag)"))
        }
        let stats = server.stats(tag: tag)
        #expect(stats.count == 3)
        #expect(stats.maxConcurrency == 1)
    }

    @Test func concurrencyIsCountedWhileRequestsAreHeld() async throws {
        let holdID = UUID().uuidString
        let url = server.url("/hold/\(holdID)/tiny.png?tag=\(tag)&max=90")
        // Connections of its own: the shared client's may all be busy with other suites' held requests.
        let client = FixtureHTTPClient()
        defer { client.invalidate() }
        let tiny = try fixture("tiny.png")
        try await withThrowingTaskGroup(of: FixtureFetchResult.self) { group in
            // Generous bounds: in a full parallel run the CPU-bound decoding suites can hold both of the
            // cooperative pool's threads for seconds, so the four requests may leave far apart, and the first
            // ones must neither time out nor be let through before the last one arrived.
            for _ in 0..<4 {
                group.addTask { await client.fetch(url, timeout: 90) }
            }
            let arrived = await server.awaitRequests(tag: tag, count: 4)
            #expect(arrived.allSatisfy { $0.finished == nil })
            #expect(server.stats(tag: tag).inFlight == 4)
            server.release(holdID)
            for try await result in group {
                #expect(result.status == 200)
                #expect(result.data == tiny)
                #expect(result.response?.value(forHTTPHeaderField: "X-Hold") == "released")
            }
        }
        await server.awaitRequests(tag: tag, count: 4, finished: true)
        let stats = server.stats(tag: tag)
        #expect(stats.count == 4)
        #expect(stats.maxConcurrency == 4)
        #expect(stats.inFlight == 0)
    }

    // MARK: /hold

    @Test func holdWaitsForReleaseAndReleasedIDsPassAtOnce() async throws {
        let holdID = UUID().uuidString
        let url = server.url("/hold/\(holdID)/image.png?tag=\(tag)&max=20")
        let client = self.client
        let held = Task { await client.fetch(url) }
        let arrived = await server.awaitRequests(tag: tag, count: 1)
        #expect(arrived.first?.finished == nil)
        server.release(holdID)
        let result = await held.value
        #expect(result.status == 200)
        #expect(result.data == (try fixture("image.png")))
        let later = await client.fetch(url)
        #expect(later.status == 200)
        #expect(later.response?.value(forHTTPHeaderField: "X-Hold") == "released")
    }

    @Test func holdServesTheFileAfterItsBound() async throws {
        let result = await client.fetch(server.url("/hold/\(UUID().uuidString)/tiny.png?tag=\(tag)&max=0.2"))
        #expect(result.status == 200)
        #expect(result.response?.value(forHTTPHeaderField: "X-Hold") == "timeout")
        #expect(result.data == (try fixture("tiny.png")))
    }

    // MARK: /drip

    @Test func dripArrivesInSeveralChunks() async throws {
        let original = try fixture("progressive.jpg")
        let result = await client.fetch(server.url("/drip/progressive.jpg?tag=\(tag)&chunk=4096&delay_ms=30"))
        #expect(result.error == nil)
        #expect(result.status == 200)
        #expect(result.response?.value(forHTTPHeaderField: "Content-Length") == String(original.count))
        #expect(result.data == original)
        // 68721 bytes in 17 pieces of 4 KB, 30 ms apart: the client sees several separate deliveries.
        #expect(result.chunkSizes.count >= 3)
        #expect(await server.awaitRequests(tag: tag, count: 1, finished: true).first?.bytesSent == original.count)
    }

    @Test func dripWithAHoldPausesAtTheGivenByteUntilReleased() async throws {
        let original = try fixture("progressive.jpg")
        let holdID = UUID().uuidString
        let url = server.url("/drip/progressive.jpg?tag=\(tag)&chunk=4096&delay_ms=0&hold=\(holdID)&hold_at=10000")
        let client = self.client
        let fetch = Task { await client.fetch(url) }
        // Held: the request is in flight and stays unfinished.
        #expect(await server.awaitRequests(tag: tag, count: 1).first?.finished == nil)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(server.stats(tag: tag).inFlight == 1)
        server.release(holdID)
        let result = await fetch.value
        #expect(result.status == 200)
        #expect(result.data == original)
        #expect(await server.awaitRequests(tag: tag, count: 1, finished: true).first?.bytesSent == original.count)

        // Unreleased, the pause ends by itself after `max` seconds.
        let bounded = await client.fetch(server.url(
            "/drip/progressive.jpg?tag=\(tag)&chunk=4096&delay_ms=0&hold=\(UUID().uuidString)&max=1"))
        #expect(bounded.data == original)
    }

    // MARK: Launcher

    @Test func missingInterpreterFailsClearly() throws {
        let interpreter = "python3-missing-\(UUID().uuidString.prefix(8))"
        switch FixtureServer.launch(interpreter: interpreter) {
        case .success(let launched):
            launched.process.terminate()
            Issue.record("a server started with a missing interpreter")
        case .failure(let failure):
            #expect(failure.message.contains(interpreter))
        }
    }

    @Test func serverExitsWhenItsStdinCloses() async throws {
        let launched: FixtureServer.Launched
        switch FixtureServer.launch() {
        case .success(let value): launched = value
        case .failure(let failure):
            Issue.record("second server did not start: \(failure.message)")
            return
        }
        let health = try #require(URL(string: "http://127.0.0.1:\(launched.port)/_health"))
        #expect(await client.fetch(health).status == 200)
        try launched.stdin.fileHandleForWriting.close()
        let exited = await exits(launched.process, within: 30)
        #expect(exited)
        if exited {
            #expect(launched.process.terminationStatus == 0)
        } else {
            launched.process.terminate()
        }
    }
}

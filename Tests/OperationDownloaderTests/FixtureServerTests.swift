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

    private func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: FixtureServer.fixturesDirectory.appendingPathComponent(name))
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
        let log = server.requests(tag: tag)
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

    @Test func gzipBodyIsDecodedTransparently() async throws {
        // README.md is text: it compresses well, so the wire size shows that gzip was applied.
        let original = try fixture("README.md")
        let result = await client.fetch(server.url("/images/README.md?tag=\(tag)&gzip=1"))
        #expect(result.status == 200)
        #expect(result.data == original)
        #expect(result.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        let logged = try #require(server.requests(tag: tag).first)
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
}

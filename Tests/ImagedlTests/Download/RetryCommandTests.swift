import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `imagedl --retry N` retries through the downloader (issue 16): `--json`'s `attempts` counts the requests the
/// server answered, a failure worth retrying is tried N more times, a 404 never is.
@Suite(.offThePool) struct RetryCommandTests {
    private static func run(retry: Int, server: LoopbackHTTPServer) -> [[String: Any]] {
        var options = DownloadOptions()
        options.urls = [server.url("/flaky.gif"), server.url("/down.gif"), server.url("/missing.gif")]
        options.retry = retry
        options.json = true
        // Retries live above the transport (both get them: RetryEndToEndTests); pinned so the test runs anywhere.
        options.transport = .urlsession
        let lines = LineCollector()
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: lines.add))
        _ = command.run()
        return lines.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// `/flaky.gif` fails `flakyFailures` times with 503, `/down.gif` always does, anything else is a 404.
    private static func server(flakyFailures: Int) throws -> LoopbackHTTPServer {
        let gif = try DemoSamples.data(named: "bounce.gif")
        return try LoopbackHTTPServer(routes: [
            "/flaky.gif": .init(body: gif, contentType: "image/gif", failFirst: flakyFailures),
            "/down.gif": .init(body: gif, contentType: "image/gif", failFirst: 1000),
        ])
    }

    private static func object(_ objects: [[String: Any]], _ path: String) -> [String: Any]? {
        objects.first { ($0["url"] as? String)?.hasSuffix(path) == true }
    }

    @Test func retryTwiceMakesUpToThreeAttemptsAndTheJSONSaysHowMany() throws {
        let server = try Self.server(flakyFailures: 2)
        defer { server.stop() }
        let objects = Self.run(retry: 2, server: server)
        #expect(objects.count == 3)
        let flaky = try #require(Self.object(objects, "/flaky.gif"))
        #expect(flaky["status"] as? String == "ok" && flaky["attempts"] as? Int == 3)
        let down = try #require(Self.object(objects, "/down.gif"))
        #expect(down["status"] as? String == "error" && down["attempts"] as? Int == 3)
        #expect(down["error"] as? String == "HTTP 503 Service Unavailable (after 3 attempts)",
                "\(String(describing: down["error"]))")
        // The failure's last attempt, as the transport measured it (URLSession on Linux measures none of these
        // figures, so they are null, but the object is there: an attempt was made).
        let network = try #require(down["network"] as? [String: Any], "\(String(describing: down["network"]))")
        #expect(network.keys.contains("remote_address"))
        #expect(down["http_status"] as? Int == 503)
        let missing = try #require(Self.object(objects, "/missing.gif"))
        #expect(missing["attempts"] as? Int == 1)
        #expect(missing["error"] as? String == "HTTP 404 Not Found", "one attempt: no count in the message")
        #expect(server.requestCount("/flaky.gif") == 3 && server.requestCount("/down.gif") == 3)
        #expect(server.requestCount("/missing.gif") == 1)
    }

    @Test func withoutRetryEveryURLMakesOneAttempt() throws {
        let server = try Self.server(flakyFailures: 1)
        defer { server.stop() }
        let objects = Self.run(retry: 0, server: server)
        #expect(objects.count == 3)
        #expect(objects.allSatisfy { $0["status"] as? String == "error" && $0["attempts"] as? Int == 1 })
        #expect(server.requestCount("/flaky.gif") == 1)
    }
}

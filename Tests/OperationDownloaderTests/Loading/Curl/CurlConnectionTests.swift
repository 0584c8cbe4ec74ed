import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// Connections: the per-host cap holds (counted at the server), keep-alive, libcurl's silent re-send on a
/// dead kept-alive connection is reported, priorities order waiting transfers, IPv6 literal hosts, proxies.
@Suite(.requires(.libcurl))
struct CurlConnectionTests {
    let server = FixtureServer.shared

    private var base: URL { server.url("") }

    @Test func perHostConnectionCapHolds() async throws {
        let cap = 3
        let harness = CurlHarness { $0.maximumConnectionsPerHost = cap }
        defer { harness.invalidate() }
        let tag = newTag()
        let clients = (0..<24).map { _ in RecordingTransferClient() }
        for (index, client) in clients.enumerated() {
            harness.start(server.url("/images/baseline.jpg?delay_ms=40&tag=\(tag)&n=\(index)"), client: client)
        }
        for client in clients { await client.waitForCompletion() }
        #expect(clients.allSatisfy { $0.error == nil && $0.body.count == 70522 })
        let connections = try #require(FixtureControl.connections(base: base, tag: tag))
        #expect(connections.maxOpen <= cap, "\(connections)")
        #expect(connections.connections <= cap, "kept alive and reused: \(connections)")
        #expect(server.stats(tag: tag).maxConcurrency <= cap)
        #expect(clients.filter { $0.metrics?.connectionReused == true }.count >= 24 - cap)
    }

    /// libcurl re-sends a request by itself, once, when a kept-alive connection turns out to be dead; the
    /// server then sees two requests: the metrics say so.
    @Test func silentReSendOnADeadConnectionIsCounted() async throws {
        let harness = CurlHarness { $0.maximumConnectionsPerHost = 1 }
        defer { harness.invalidate() }
        let tag = newTag()
        let first = await harness.run(server.url("/images/tiny.png?tag=\(tag)"))
        #expect(first.metrics?.requestsSent == 1)
        let second = await harness.run(server.url("/drop-if-reused/tiny.png?tag=\(tag)"))
        #expect(second.error == nil)
        #expect(second.body == (try FixtureServer.fixtureData("tiny.png")))
        #expect(second.metrics?.requestsSent == 2)
        #expect(second.metrics?.connectionReused == false, "the answer came over a fresh connection")
        #expect(server.requests(tag: tag).filter { $0.path == "/drop-if-reused/tiny.png" }.count == 2)
        #expect(second.events.filter { $0 == .response(200) }.count == 1, "the dead attempt delivered nothing")
    }

    /// With a limit on active transfers, waiting ones start best priority first; a raised priority counts.
    @Test func waitingTransfersStartByPriority() async throws {
        let harness = CurlHarness { $0.maximumActiveTransfers = 1 }
        defer { harness.invalidate() }
        let tag = newTag()
        let hold = "curl-priority-\(tag)"
        let blocker = RecordingTransferClient()
        harness.start(server.url("/hold/\(hold)/tiny.png?tag=\(tag)&name=blocker&max=120"), client: blocker)
        await server.awaitRequests(tag: tag, count: 1)
        let names = ["low": Float(0.25), "normal": 0.5, "high": 0.75, "raised": 0.1]
        var clients: [String: RecordingTransferClient] = [:]
        var transfers: [String: any TransportTransfer] = [:]
        for name in ["low", "normal", "high", "raised"] {
            let client = RecordingTransferClient()
            clients[name] = client
            transfers[name] = harness.start(server.url("/images/tiny.png?tag=\(tag)&name=\(name)"), client: client) {
                $0.priority = names[name] ?? 0.5
            }
        }
        transfers["raised"]?.setPriority(1)
        // The commands above reach the curl thread in order; the waiting list is settled before the release.
        server.release(hold)
        for client in [blocker] + clients.values { await client.waitForCompletion() }
        let order = server.requests(tag: tag).compactMap { $0.query["name"] }
        #expect(order == ["blocker", "raised", "high", "normal", "low"])
    }

    @Test(.requires(.ipv6Loopback)) func ipv6LiteralHost() async throws {
        let ipv6 = try LaunchedFixtureServer(arguments: ["--host", "::1"], host: "[::1]")
        defer { ipv6.stop() }
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = await harness.run(ipv6.url("/images/tiny.png?tag=\(tag)"))
        #expect(client.error == nil)
        #expect(client.body == (try FixtureServer.fixtureData("tiny.png")))
        #expect(client.metrics?.remoteAddress == "::1")
        #expect(client.metrics?.remotePort == ipv6.launched.port)
    }

    /// Through an explicit proxy (the fixture server answers absolute-form requests): a host that does not
    /// resolve is reached, because only the proxy resolves it.
    @Test func explicitProxyCarriesTheRequest() async throws {
        let harness = CurlHarness { $0.proxy = .proxy(base) }
        defer { harness.invalidate() }
        let tag = newTag()
        let target = try #require(URL(string: "http://proxied.invalid:\(server.port)/images/tiny.png?tag=\(tag)"))
        let client = await harness.run(target)
        #expect(client.error == nil)
        #expect(client.body == (try FixtureServer.fixtureData("tiny.png")))
        let logged = server.requests(tag: tag)
        #expect(logged.first?.headers["host"] == "proxied.invalid:\(server.port)")
    }

    @Test func bypassedHostsGoDirect() async throws {
        // The proxy is a port nobody listens on: a request that uses it fails to connect.
        let harness = CurlHarness { $0.proxy = .proxy(URL(string: "http://127.0.0.1:1")!, bypassing: ["localhost"]) }
        defer { harness.invalidate() }
        let tag = newTag()
        let direct = await harness.run(server.localhostURL("/images/tiny.png?tag=\(tag)"))
        #expect(direct.error == nil)
        let proxied = await harness.run(server.url("/images/tiny.png?tag=\(tag)&proxied=1"))
        #expect(proxied.urlError?.code == .cannotConnectToHost)
        #expect(server.requests(tag: tag).count == 1)
    }

    /// A 407 from the proxy is a challenge with isProxy; the credential goes to the proxy only.
    @Test func proxyChallenge() async throws {
        let harness = CurlHarness { $0.proxy = .proxy(base) }
        defer { harness.invalidate() }
        let tag = newTag()
        let client = RecordingTransferClient()
        client.credential = { $0.isProxy && $0.previousFailureCount == 0 ? URLCredential(user: "p", password: "q", persistence: .none) : nil }
        let target = try #require(URL(string: "http://proxied.invalid:\(server.port)/proxy-auth/p/q/tiny.png?tag=\(tag)"))
        _ = await harness.run(target, client: client)
        #expect(client.error == nil)
        #expect(client.lastResponse?.statusCode == 200)
        let challenges = client.events.compactMap { event -> TransferChallenge? in
            if case .challenge(let challenge) = event { return challenge } else { return nil }
        }
        #expect(challenges.count == 1)
        #expect(challenges.first?.isProxy == true && challenges.first?.realm == "proxy")
        #expect(challenges.first?.host == "127.0.0.1" && challenges.first?.port == server.port)
        let logged = server.requests(tag: tag)
        #expect(logged.count == 2)
        #expect(logged.last?.headers["proxy-authorization"] == "Basic cDpx")
        #expect(logged.last?.headers["authorization"] == nil)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// After an outage: the background probe closes each node's breaker as soon as the server answers — no
/// download pays for the probe — and single-flight applies from then on: the fleet's next misses reach the
/// origin once each, not once per process.
@Suite(.requires(.redisServer)) struct RedisRecoveryTests {
    @Test func singleFlightAppliesAsSoonAsTheBreakerCloses() async throws {
        let server = FixtureServer.shared
        let port = try LoopbackPort.free()
        var options = RedisCacheFixtures.options()
        options.retryInterval = 0.1
        options.maximumRetryInterval = 0.2
        options.maximumWait = 600
        let warnings = WarningLog()
        let fleet = RedisFleetRun(redis: "redis://127.0.0.1:\(port)/0", options: options, members: 3, warnings: warnings)
        func urls(_ tag: String) -> [URL] {
            (0..<20).map { server.url("/images/image.png?cc=max-age%3D600&delay_ms=50&n=\($0)&tag=\(tag)") }
        }
        // Redis down: every process fetches for itself (one warning each).
        let (outage, after) = (newTag(), newTag())
        let down = try #require(try await fleet.run(urls(outage), tag: outage, bound: 60))
        #expect(down.failed == 0 && server.stats(tag: outage).count == 60)
        #expect(warnings.all.count == 3, "\(warnings.all)")
        // Redis back: the probes find it without a download asking.
        let redis = try await RedisServer.start(port: port)
        defer { redis.stop() }
        let clients = try down.caches.map { try #require($0.redisByteStore).client }
        #expect(await waitUntil(timeout: 30) { clients.allSatisfy { $0.events.nodesUnavailable.isEmpty } })
        let up = try #require(try await fleet.run(urls(after), tag: after, bound: 60, reusing: down.caches))
        #expect(up.failed == 0)
        #expect(server.stats(tag: after).count == 20, "\(server.stats(tag: after).count) origin requests for 20 URLs")
        #expect(up.flights.reduce(0) { $0 + $1.waitsBegun } > 0)
    }
}

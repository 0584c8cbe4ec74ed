import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// A fleet of real processes (`imagedl --http-cache redis://...`) on one redis-server and one origin (the
/// fixture server, which counts the requests that reach it). One test at a time: eight processes over 1,000 URLs
/// beside the others starved them on a 2-core machine past their lock lifetimes and timeouts (more origin requests).
@Suite(.requires(.redisServer, .imagedl), .serialized) struct RedisFleetTests {
    let server = FixtureServer.shared

    func cacheURL(_ redis: RedisServer, _ query: String = "") -> String {
        redis.url().absoluteString + query
    }

    /// A file of URLs for `--input`.
    func urlFile(_ urls: [URL]) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString).txt")
        try urls.map(\.absoluteString).joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    func values(_ records: [[String: Any]], _ field: String) -> [String] {
        records.map { ($0[field] as? String) ?? "\($0[field] ?? "nil")" }
    }

    @Test func anotherProcessGetsHitsFromRedis() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let urls = (0..<5).map { server.url("/images/image.png?cc=max-age%3D600&n=\($0)&tag=\(tag)").absoluteString }
        let first = try await ImagedlProcess(["--http-cache", cacheURL(redis)] + urls).finish()
        #expect(first.status == 0 && values(first.records, "status") == Array(repeating: "ok", count: 5))
        #expect(first.records.allSatisfy { $0["cache"] is NSNull })
        let second = try await ImagedlProcess(["--http-cache", cacheURL(redis)] + urls).finish()
        #expect(second.status == 0 && values(second.records, "cache") == Array(repeating: "hit", count: 5), "\(second.standardError)")
        // A Redis hit is an HTTP-cache answer: no request sent (issue 37).
        #expect(first.records.allSatisfy { $0["attempts"] as? Int == 1 && $0["source"] as? String == "network" })
        #expect(second.records.allSatisfy { $0["attempts"] as? Int == 0 && $0["source"] as? String == "http_cache" }, "\(second.records)")
        #expect(server.stats(tag: tag).count == 5)
    }

    /// Four processes over the same 30 URLs at once: each URL reaches the origin once, and processes did wait for
    /// each other. The first URL is held at the origin until all four have asked for its lock (Redis's command log
    /// shows each `SET … NX`), so at least the three that did not get it waited: processes that ran one after
    /// another would fetch nothing twice either, but would never wait.
    @Test func fourProcessesFetchEachURLOnce() async throws {
        let redis = try await RedisServer.start(arguments: FleetLockProbe.commandLogArguments); defer { redis.stop() }
        let tag = newTag()
        let first = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&n=0&tag=\(tag)")
        let file = try urlFile([first] + (1..<30).map { server.url("/images/image.png?cc=max-age%3D600&delay_ms=20&n=\($0)&tag=\(tag)") })
        defer { try? FileManager.default.removeItem(at: file) }
        // max_wait far above any start-up: a process that gave up waiting would fetch the first URL a second time.
        let fleet = try (0..<4).map { _ in try ImagedlProcess(["--http-cache", cacheURL(redis, "?max_wait=600"), "--input", file.path]) }
        let probe = FleetLockProbe(redis)
        let asked = await probe.waitForLockAttempts(on: first, count: 4)
        #expect(asked >= 4, "only \(asked) of 4 processes asked for the first URL's lock")
        server.release(tag)
        var outcomes: [ImagedlProcess.Outcome] = []
        for member in fleet { outcomes.append(await member.finish()) }
        for outcome in outcomes {
            #expect(outcome.status == 0 && outcome.records.count == 30 && values(outcome.records, "status").allSatisfy { $0 == "ok" },
                    "\(outcome.standardError)")
        }
        #expect(server.stats(tag: tag).count == 30)
        let waits = outcomes.flatMap(\.records).filter { ($0["shared_wait"] as? Bool) == true }.count
        let hits = outcomes.flatMap(\.records).filter { ($0["cache"] as? String) == "hit" }.count
        // Every download the origin did not answer came from Redis, after a wait or straight away; the three
        // processes behind the first URL's holder waited for it.
        #expect(hits == 90 && waits >= 3 && waits <= 90, "hits \(hits), waits \(waits)")
    }

    /// Eight processes over the same 1,000 URLs at once on two tiers (issue 39): four machines, each with its own
    /// directory shared by two of its processes, in front of one Redis. Each URL reaches the origin once, every
    /// download succeeds, and both tiers end up holding every entry (each directory its machine's copy).
    @Test func eightProcessesOverAThousandURLsOnTwoTiers() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let machines = (0..<4).map { _ in TemporaryCacheDirectory() }
        defer { for machine in machines { machine.remove() } }
        let tag = newTag()
        let file = try urlFile((0..<1000).map { server.url("/images/image.png?cc=max-age%3D600&n=\($0)&tag=\(tag)") })
        defer { try? FileManager.default.removeItem(at: file) }
        let fleet = try (0..<8).map { index in
            try ImagedlProcess(["--http-cache", machines[index % 4].url.path, "--http-cache", cacheURL(redis), "--input", file.path])
        }
        var outcomes: [ImagedlProcess.Outcome] = []
        for member in fleet { outcomes.append(await member.finish()) }
        for outcome in outcomes {
            #expect(outcome.status == 0 && outcome.records.count == 1000 && values(outcome.records, "status").allSatisfy { $0 == "ok" },
                    "\(outcome.standardError.suffix(2000))")
        }
        #expect(server.stats(tag: tag).count == 1000)
        #expect(outcomes.flatMap(\.records).filter { ($0["cache"] as? String) == "hit" }.count == 7000)
        #expect(try RedisProbe(redis).keys("od:v2:*").filter { !$0.hasSuffix(":lock") }.count == 1000)
        for machine in machines { #expect(machine.entryFiles.count == 1000) }
    }

    /// The lock holder is killed (SIGKILL) mid-fetch: its lock expires and the waiting process takes over.
    /// By time: the waiter's request reaches the origin within the lock's lifetime (2 s) plus a margin, while
    /// `max_wait` (600 s) is far above it, so a waiter that merely gave up waiting cannot pass. By identity: the
    /// lock then holds a token that is neither the dead holder's nor the `done` marker: the waiter's, the only
    /// process left.
    @Test func aKilledHolderIsTakenOver() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&max=120&tag=\(tag)")
        let lockTimeout: TimeInterval = 2
        let cache = cacheURL(redis, "?lock_timeout=\(Int(lockTimeout))&max_wait=600")
        let holder = try ImagedlProcess(["--http-cache", cache, url.absoluteString])
        await server.awaitRequests(tag: tag, count: 1)
        let probe = FleetLockProbe(redis)
        let holderToken = try probe.lockToken(of: url)
        #expect(holderToken != nil, "the holder fetches without a lock")
        let setsBefore = try Self.calls(of: "set", probe.redis)
        let waiter = try ImagedlProcess(["--http-cache", cache, url.absoluteString])
        // The waiter has tried the lock (one SET NX more) and found it held: it waits.
        #expect(await waitUntil { ((try? Self.calls(of: "set", probe.redis)) ?? 0) > setsBefore })
        kill(holder.processIdentifier, SIGKILL)
        let killed = Date().timeIntervalSince1970
        _ = await holder.finish()
        let log = await server.awaitRequests(tag: tag, count: 2, timeout: lockTimeout + FleetLockProbe.takeOverMargin)
        guard log.count >= 2 else {
            // No take-over within the bound (the failure is recorded): end the waiter instead of waiting out max_wait.
            kill(waiter.processIdentifier, SIGKILL)
            _ = await waiter.finish()
            return
        }
        let after = log[1].started - killed
        #expect(after <= lockTimeout + FleetLockProbe.takeOverMargin,
                "the waiter fetched \(after) s after the kill: not within the lock's lifetime (\(lockTimeout) s) + margin")
        let token = try probe.lockToken(of: url)
        #expect(token != nil && token != holderToken && token != RedisFlightLocks.doneMarker,
                "the lock is not the waiter's: \(token.map { String(decoding: $0, as: UTF8.self) } ?? "none")")
        server.release(tag)
        let outcome = await waiter.finish()
        #expect(outcome.status == 0 && values(outcome.records, "status") == ["ok"], "\(outcome.standardError)")
        #expect(outcome.records.first?["shared_wait"] as? Bool == true)
        #expect(server.stats(tag: tag).count == 2)
    }

    /// A holder paused (SIGSTOP) past its lock's lifetime, whose lock meanwhile went to a successor, then resumed
    /// (SIGCONT): its renewals and its end compare the token, so the successor's lock is neither extended,
    /// replaced by `done`, nor deleted — and the paused holder's download still succeeds (its entry is valid).
    @Test func aPausedHolderNeverTouchesItsSuccessorsLock() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&max=120&tag=\(tag)")
        let lock = RedisCacheFixtures.lockKey(for: url)
        let probe = RedisProbe(redis)
        let holder = try ImagedlProcess(["--http-cache", cacheURL(redis, "?lock_timeout=1"), url.absoluteString])
        await server.awaitRequests(tag: tag, count: 1)
        let token = try #require(try probe.get(lock))
        kill(holder.processIdentifier, SIGSTOP)
        // Its lock expires (no renewal from a stopped process); a successor takes it.
        #expect(await waitUntil(timeout: 30) { ((try? probe.pttl(lock)) ?? 0) == -2 })
        let successor = Data("the-successor's-token".utf8)
        #expect(try probe.command("SET", lock, successor, "NX", "PX", 60_000) == .status("OK"))
        kill(holder.processIdentifier, SIGCONT)
        // Renewals come every third of the lifetime: give the resumed holder several before its download ends.
        try await Task.sleep(nanoseconds: 1_500_000_000)
        server.release(tag)
        let outcome = await holder.finish()
        #expect(outcome.status == 0 && values(outcome.records, "status") == ["ok"], "\(outcome.standardError)")
        #expect(try probe.get(lock) == successor && token != successor)
        #expect(try probe.pttl(lock) > 50_000, "the successor's lock was renewed by the paused holder")
        // Its response was stored all the same: a whole, checksummed entry.
        #expect(try probe.get(RedisCacheFixtures.entryKey(for: url)) != nil)
    }

    /// Redis killed while four processes run: every download still succeeds.
    @Test func redisKilledMidRunFailsNoDownload() async throws {
        let redis = try await RedisServer.start()
        let tag = newTag()
        let file = try urlFile((0..<30).map { server.url("/images/image.png?cc=max-age%3D600&delay_ms=\($0 * 5)&n=\($0)&tag=\(tag)") })
        defer { try? FileManager.default.removeItem(at: file) }
        let fleet = try (0..<4).map { _ in try ImagedlProcess(["--http-cache", cacheURL(redis), "--input", file.path]) }
        await server.awaitRequests(tag: tag, count: 5)
        redis.stop()
        for member in fleet {
            let outcome = await member.finish()
            #expect(outcome.status == 0 && outcome.records.count == 30 && values(outcome.records, "status").allSatisfy { $0 == "ok" },
                    "\(outcome.standardError)")
        }
    }

    /// One process revalidates (a 304 making the entry fresh again); the next one is served from Redis.
    @Test func aRevalidationIsSeenByTheNextProcess() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.cacheURL(tag: tag, [
            CacheScriptStep(headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v1\""), ("Content-Type", "image/png")], file: "tiny.png"),
            CacheScriptStep(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")]),
        ]).absoluteString
        let first = try await ImagedlProcess(["--http-cache", cacheURL(redis), url]).finish()
        let second = try await ImagedlProcess(["--http-cache", cacheURL(redis), url]).finish()
        let third = try await ImagedlProcess(["--http-cache", cacheURL(redis), url]).finish()
        #expect(values(first.records, "status") == ["ok"] && first.records.first?["cache"] is NSNull)
        #expect(values(second.records, "cache") == ["revalidated"], "\(second.standardError)")
        #expect(values(third.records, "cache") == ["hit"])
        let log = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(log.map(\.status) == [200, 304])
        #expect(log.last?.headers["if-none-match"] == "\"v1\"")
    }

    /// `INFO commandstats`: how many times `command` ran on the server.
    static func calls(of command: String, _ probe: RedisProbe) throws -> Int {
        guard let text = try probe.command("INFO", "commandstats").data.map({ String(decoding: $0, as: UTF8.self) }) else { return 0 }
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_\(command):calls=") {
            return Int(line.dropFirst("cmdstat_\(command):calls=".count).prefix { $0.isNumber }) ?? 0
        }
        return 0
    }
}

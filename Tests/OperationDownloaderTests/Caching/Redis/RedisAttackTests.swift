import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestRequirements
@testable import OperationDownloader

/// What an attack on the Redis tier found (issue 39), each now a regression test: a server that refuses writes or
/// answers errors never holds single-flight (the download fetches at once, one warning names the real cause),
/// and no reply — huge, trickling, absurd — is read beyond its bound in size or time. Real redis-servers, or a
/// small fake one (`FakeRedisServer`) where a real server cannot misbehave that way. `maximumWait` is set far
/// beyond every test's bound: a download that waited for it would fail the test.
@Suite(.requires(.redisServer)) struct RedisAttackTests {
    typealias F = HTTPCacheFixtures
    let server = FixtureServer.shared
    /// The longest any test here waits for its downloads (far below `maximumWait`).
    static let bound: TimeInterval = 60

    func options() -> RedisCacheOptions {
        var options = RedisCacheFixtures.options()
        options.maximumWait = 600
        return options
    }

    /// Two "processes" (each its own cache and downloader) download `urls` at once; nil when they did not all end
    /// within `bound`.
    func downloadTwice(_ redis: String, _ urls: [URL], warnings: WarningLog, options: RedisCacheOptions? = nil)
        async throws -> [ImageDownloadResult]? {
        let caches = try (0..<2).map { _ in try HTTPImageCache(redis: redis, options: options ?? self.options()) }
        for cache in caches { cache.warningHandler = { warnings.append($0) } }
        let downloaders = caches.map { cache in makeDownloader { $0.imageCache = nil; $0.httpCache = cache }.0 }
        return try await within(Self.bound) {
            try await withThrowingTaskGroup(of: ImageDownloadResult.self) { group in
                for downloader in downloaders {
                    for url in urls { group.addTask { try await downloader.image(for: url, options: .useURLCache) } }
                }
                var results: [ImageDownloadResult] = []
                for try await result in group { results.append(result) }
                return results
            }
        }
    }

    func urls(_ tag: String, count: Int) -> [URL] {
        (0..<count).map { server.url("/images/image.png?cc=max-age%3D600&delay_ms=30&n=\($0)&tag=\(tag)") }
    }

    // MARK: Refused writes and error replies: no single-flight for the key, at once

    /// `maxmemory` with `noeviction`, or a read-only replica (what a demoted primary becomes): the lock's SET is
    /// refused (OOM, READONLY). It used to be taken for "another process holds it", with no end.
    @Test(arguments: ["OOM", "READONLY"])
    func aServerThatRefusesWritesDoesNotHoldDownloads(refusal: String) async throws {
        let primary = try await RedisServer.start(); defer { primary.stop() }
        var target = primary
        if refusal == "OOM" {
            let probe = RedisProbe(primary)
            _ = try probe.command("SET", "filler", Data(count: 2_000_000))
            _ = try probe.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
            _ = try probe.command("CONFIG", "SET", "maxmemory", "1mb")
        } else {
            target = try await RedisServer.start(arguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        }
        defer { target.stop() }
        let warnings = WarningLog()
        let tag = newTag()
        let results = try #require(try await downloadTwice(target.url().absoluteString, urls(tag, count: 10), warnings: warnings),
                                   "downloads held past \(Self.bound) s: \(warnings.all)")
        #expect(results.count == 20 && results.allSatisfy { $0.metrics?.waitedForSharedFetch == false })
        #expect(server.stats(tag: tag).count == 20)
        let lockWarnings = warnings.all.filter { $0.contains("single-flight lock") }
        #expect(lockWarnings.count <= 2 && lockWarnings.allSatisfy { $0.contains(refusal) }, "\(warnings.all)")
        #expect(!lockWarnings.isEmpty, "\(warnings.all)")
    }

    /// `requirepass` and a URL without a password: the server answers NOAUTH, which the warning names (it used to
    /// blame maxmemory-policy), and every download goes to the origin at once.
    @Test func noPasswordForAServerThatWantsOne() async throws {
        let redis = try await RedisServer.start(arguments: ["--requirepass", "s3cret"]); defer { redis.stop() }
        let warnings = WarningLog()
        let tag = newTag()
        let results = try #require(try await downloadTwice(redis.url().absoluteString, urls(tag, count: 10), warnings: warnings))
        #expect(results.count == 20 && server.stats(tag: tag).count == 20)
        #expect(warnings.all.count == 2 && warnings.all.allSatisfy { $0.contains("NOAUTH") && !$0.contains("maxmemory") }, "\(warnings.all)")
    }

    /// A server answering `-ERR` to everything: reads miss, the lock is refused, downloads go on at once.
    @Test func aServerAnsweringErrors() async throws {
        let fake = try FakeRedisServer { _ in .now("-ERR this is not the Redis you are looking for\r\n") }
        defer { fake.stop() }
        let warnings = WarningLog()
        let tag = newTag()
        let results = try #require(try await downloadTwice(fake.url.absoluteString, urls(tag, count: 10), warnings: warnings))
        #expect(results.count == 20 && server.stats(tag: tag).count == 20)
        // One warning per cache for the lock, one for the writes, each naming the error.
        #expect(warnings.all.filter { $0.contains("single-flight lock") && $0.contains("ERR this is not") }.count == 2, "\(warnings.all)")
        #expect(fake.commandsSeen.current.contains("SET"))
    }

    /// A lock key this cache did not write — another type, or a string without expiry (it would never go): the
    /// waiter stops at its first poll and fetches; the key is left alone.
    @Test(arguments: ["hash", "no expiry"])
    func aForeignLockKeyEndsTheWait(kind: String) async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=max-age%3D600&tag=\(tag)")
        let lock = RedisCacheFixtures.lockKey(for: url)
        let probe = RedisProbe(redis)
        if kind == "hash" { _ = try probe.command("HSET", lock, "field", "value") } else { _ = try probe.command("SET", lock, "someone") }
        let warnings = WarningLog()
        let cache = try HTTPImageCache(redis: redis.url(), options: options())
        cache.warningHandler = { warnings.append($0) }
        let downloader = makeDownloader { $0.imageCache = nil; $0.httpCache = cache }.0
        let result = try #require(try await within(Self.bound) { try await downloader.image(for: url, options: .useURLCache) })
        #expect(result.metrics?.source == .network && server.stats(tag: tag).count == 1)
        let cause = kind == "hash" ? "WRONGTYPE" : "no expiry"
        #expect(warnings.all.count == 1 && warnings.all[0].contains(cause), "\(warnings.all)")
        #expect(try probe.command("TYPE", lock) == .status(kind == "hash" ? "hash" : "string") && probe.pttl(lock) == -1)
    }

    // MARK: Bounded replies

    /// A value far larger than any entry under an entry key: read as a bounded prefix (the server sends at most
    /// the largest entry plus one byte), a miss, and deleted.
    @Test func aHugeValueUnderAnEntryKeyIsReadBounded() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let probe = RedisProbe(redis)
        let url = F.url("http://images.test/huge.png")
        let key = RedisCacheFixtures.entryKey(for: url)
        _ = try probe.command("SET", key, Data(count: 24 << 20))
        var options = options()
        options.maximumBodySize = 64 * 1024
        let cache = try HTTPImageCache(redis: redis.url(), options: options)
        let sentBefore = try #require(try probe.info("total_net_output_bytes"))
        #expect(cache.cachedResponse(for: F.request(url.absoluteString)) == nil)
        let sent = try #require(try probe.info("total_net_output_bytes")) - sentBefore
        let limit = try #require(cache.redisTier).maximumValueLength
        #expect(sent > limit && sent < limit + 64 * 1024, "the server sent \(sent) bytes (limit \(limit))")
        #expect(try probe.get(key) == nil, "the oversized value was left in place")
    }

    /// A lock whose value is megabytes long: each poll reads a 64-byte prefix of it, not the whole (the poll used
    /// to GET it every 5 ms). Once it expires, the waiter takes over and fetches.
    @Test func aHugeLockValueIsPolledAsAPrefix() async throws {
        let redis = try await RedisServer.start(); defer { redis.stop() }
        let tag = newTag()
        let url = server.url("/images/image.png?cc=max-age%3D600&tag=\(tag)")
        let probe = RedisProbe(redis)
        let hugeValue = 4 << 20
        let cache = try HTTPImageCache(redis: redis.url(), options: options())
        let downloader = makeDownloader { $0.imageCache = nil; $0.httpCache = cache }.0
        // Set last, with room for a loaded machine (3 s was too short in a CI run sharing its 2 cores): the lock must
        // still be held when the download asks for it; the download then polls it until it expires and takes over.
        _ = try probe.command("SET", RedisCacheFixtures.lockKey(for: url), Data(count: hugeValue), "PX", 10_000)
        let sentBefore = try #require(try probe.info("total_net_output_bytes"))
        let result = try #require(try await within(Self.bound) { try await downloader.image(for: url, options: .useURLCache) })
        let sent = try #require(try probe.info("total_net_output_bytes")) - sentBefore
        #expect(result.metrics?.waitedForSharedFetch == true && server.stats(tag: tag).count == 1)
        #expect(sent < hugeValue, "the polls read \(sent) bytes")
    }

    /// A reply trickling in one byte every 0.3 s: the whole reply has one deadline (it used to be each recv's, so
    /// this never timed out), and the connection is closed.
    @Test func aTricklingReplyTimesOutAsAWhole() async throws {
        let fake = try FakeRedisServer { _ in .trickle("$5\r\nhello\r\n", every: 0.3) }
        defer { fake.stop() }
        let connection = try RedisConnection(endpoint: RedisEndpoint(url: fake.url), connectTimeout: 5, commandTimeout: 1)
        #expect {
            try connection.command(RedisCommand.make("GET", "k"))
        } throws: { error in
            (error as? RedisConnectionFailure)?.kind == .timeout
        }
        #expect(connection.isBroken)
        // Through a cache: a miss, and one warning naming the timeout.
        let warnings = WarningLog()
        var options = options()
        options.commandTimeout = 1
        let cache = try HTTPImageCache(redis: fake.url, options: options)
        cache.warningHandler = { warnings.append($0) }
        #expect(cache.cachedResponse(for: F.request("http://images.test/slow.png")) == nil)
        #expect(warnings.all.count == 1 && warnings.all[0].contains("no reply within the command timeout"), "\(warnings.all)")
    }

    /// `*2147483647` (hiredis allocated 16 GB of address space for it) and `$200000000`: refused from the first
    /// line, the connection closed; nothing of the announced size is allocated or waited for.
    @Test(arguments: ["*2147483647\r\n", "$200000000\r\n", "%1073741824\r\n"])
    func absurdLengthsAreRefusedAtOnce(reply: String) async throws {
        let fake = try FakeRedisServer { _ in .now(reply) }
        defer { fake.stop() }
        // A long command timeout: the refusal must not be a timeout.
        let connection = try RedisConnection(endpoint: RedisEndpoint(url: fake.url), connectTimeout: 5, commandTimeout: 30)
        #expect {
            try connection.command(RedisCommand.make("GET", "k"))
        } throws: { error in
            (error as? RedisConnectionFailure)?.kind == .protocolError
        }
        let warnings = WarningLog()
        let cache = try HTTPImageCache(redis: fake.url, options: options())
        cache.warningHandler = { warnings.append($0) }
        #expect(cache.cachedResponse(for: F.request("http://images.test/absurd.png")) == nil)
        #expect(warnings.all.count == 1 && warnings.all[0].contains("larger than allowed"), "\(warnings.all)")
    }

    // MARK: Secrets and loading

    /// The password comes from a file or the environment, so `ps` does not show it; the cache works with it.
    @Test(.requires(.imagedl)) func thePasswordStaysOffTheCommandLine() async throws {
        let redis = try await RedisServer.start(arguments: ["--requirepass", "hunter2-s3cret"]); defer { redis.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("redis-url-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try redis.url(password: "hunter2-s3cret").absoluteString.write(to: file, atomically: true, encoding: .utf8)
        for useFile in [true, false] {
            let tag = newTag()
            let url = server.url("/hold/\(tag)/image.png?cc=max-age%3D600&tag=\(tag)").absoluteString
            let member = useFile
                ? try ImagedlProcess(["--http-cache-url-file", file.path, url])
                : try ImagedlProcess([url], environment: ["OD_REDIS_URL": redis.url(password: "hunter2-s3cret").absoluteString])
            await server.awaitRequests(tag: tag, count: 1)
            let commandLine = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(member.processIdentifier)/cmdline"))
            #expect(!String(decoding: commandLine, as: UTF8.self).contains("hunter2"))
            server.release(tag)
            let outcome = await member.finish()
            #expect(outcome.status == 0 && outcome.standardError.isEmpty, "\(outcome.standardError)")
            // It logged in: the entry is there.
            #expect(try RedisProbe(redis, password: "hunter2-s3cret").keys("od:v2:*").count >= 1)
        }
        // No client library is loaded: the package speaks RESP itself (hiredis 0.14 beside 1.x crashed a process).
        let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
        #expect(!maps.contains("hiredis"))
    }
}

/// Runs `work`, waiting at most `seconds` for it: nil when it had not ended by then (it is cancelled).
func within<T: Sendable>(_ seconds: TimeInterval, _ work: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}

import Foundation
import Testing
@testable import OperationDownloader

/// `redis://[user:password@]host:port[/db]` and its query options, parsed without a server.
@Suite struct RedisConfigurationTests {
    @Test func parsesHostPortDatabaseAndCredentials() async throws {
        let plain = try RedisEndpoint(url: try #require(URL(string: "redis://cache.internal:6380/3")))
        #expect(plain.host == "cache.internal" && plain.port == 6380 && plain.database == 3)
        #expect(plain.username == nil && plain.password == nil)

        let defaults = try RedisEndpoint(url: try #require(URL(string: "redis://10.0.0.5")))
        #expect(defaults.port == 6379 && defaults.database == 0)

        let acl = try RedisEndpoint(url: try #require(URL(string: "redis://alice:s%40cret@127.0.0.1:6379/0")))
        #expect(acl.username == "alice" && acl.password == "s@cret")

        let defaultUser = try RedisEndpoint(url: try #require(URL(string: "redis://:secret@127.0.0.1:6379")))
        #expect(defaultUser.username == nil && defaultUser.password == "secret")

        // As redis-cli and redis-py read it: a lone user-info is the password.
        let loneSecret = try RedisEndpoint(url: try #require(URL(string: "redis://secret@127.0.0.1")))
        #expect(loneSecret.username == nil && loneSecret.password == "secret")

        let ipv6 = try RedisEndpoint(url: try #require(URL(string: "redis://[::1]:7000/1")))
        #expect(ipv6.host == "::1" && ipv6.port == 7000 && ipv6.displayName == "[::1]:7000")
    }

    /// The server a warning names never carries the password.
    @Test func displayNameHasNoCredentials() async throws {
        let endpoint = try RedisEndpoint(url: try #require(URL(string: "redis://alice:secret@127.0.0.1:6390/2")))
        #expect(endpoint.displayName == "127.0.0.1:6390")
        let cache = try HTTPImageCache(redis: "redis-sentinel://alice:secret@127.0.0.1:1,127.0.0.1:2/mymaster")
        #expect(try #require(cache.redisByteStore).client.displayName == "Sentinel primary mymaster (127.0.0.1:1,127.0.0.1:2)")
        #expect(cache.directory == nil)
    }

    @Test(arguments: [
        ("http://127.0.0.1:6379", RedisCacheError.unsupportedScheme("http")),
        ("memcached://127.0.0.1:11211", .unsupportedScheme("memcached")),
        ("rediss://127.0.0.1:6380", .tlsUnavailable),
    ])
    func refusesOtherSchemes(url: String, expected: RedisCacheError) throws {
        #expect(throws: expected) { try RedisEndpoint(url: try #require(URL(string: url))) }
        #expect(throws: expected) { try HTTPImageCache(redis: try #require(URL(string: url))) }
    }

    @Test(arguments: ["redis:///0", "redis://127.0.0.1:6379/x", "redis://127.0.0.1:6379/-1", "redis://127.0.0.1:6379/1/2",
                      "redis://127.0.0.1:6379/01"])
    func refusesMalformedURLs(url: String) throws {
        #expect {
            try RedisEndpoint(url: try #require(URL(string: url)))
        } throws: { error in
            guard case .invalidURL? = error as? RedisCacheError else { return false }
            return true
        }
    }

    @Test func queryParametersSetTheOptions() async throws {
        let url = try #require(URL(string:
            "redis://127.0.0.1/0?prefix=thumbs&max_ttl=3600&max_body=1024&lock_timeout=2.5&max_wait=9&connect_timeout=0.1&command_timeout=0.5&single_flight=0"))
        let options = try RedisCacheOptions().applying(queryOf: url)
        #expect(options.keyPrefix == "thumbs" && options.maximumTimeToLive == 3600 && options.maximumBodySize == 1024)
        #expect(options.lockTimeout == 2.5 && options.maximumWait == 9 && options.connectTimeout == 0.1)
        #expect(options.commandTimeout == 0.5 && !options.singleFlight)
        // No query: the options as given.
        let untouched = try RedisCacheOptions(keyPrefix: "x").applying(queryOf: try #require(URL(string: "redis://h")))
        #expect(untouched == RedisCacheOptions(keyPrefix: "x"))
    }

    @Test(arguments: ["?bogus=1", "?max_ttl=-1", "?max_ttl=abc", "?prefix=", "?single_flight=yes", "?lock_timeout=0"])
    func refusesBadQueryParameters(query: String) async throws {
        let url = try #require(URL(string: "redis://127.0.0.1:6379/0" + query))
        #expect {
            try RedisCacheOptions().applying(queryOf: url)
        } throws: { error in
            guard case .invalidURL? = error as? RedisCacheError else { return false }
            return true
        }
    }

    @Test func keysAreNamespacedAndHashed() async throws {
        let keys = RedisKeySpace(prefix: "od")
        let name = HTTPCacheKey.fileName(for: "https://example.com:443/a.png")
        let entry = String(decoding: keys.entryKey(name), as: UTF8.self)
        let hash = HTTPCacheHashing.sha256Hex("https://example.com:443/a.png")
        #expect(entry == "od:v2:{\(hash)}")
        #expect(String(decoding: keys.lockKey(name), as: UTF8.self) == "od:v2:{\(hash)}:lock")
        // The hash in braces is a Cluster hash tag: an entry and its lock share a slot.
        #expect(RedisClusterSlotMap.slot(of: keys.entryKey(name)) == RedisClusterSlotMap.slot(of: keys.lockKey(name)))
        // A prefix with glob characters matches only itself in SCAN.
        #expect(String(decoding: RedisKeySpace(prefix: "a*b[1]").scanPattern, as: UTF8.self) == "a\\*b\\[1\\]:v2:*")
    }
    /// redis-sentinel:// and redis-cluster:// (contract, SPEC §12): several hosts, each with its port or the default.
    @Test func parsesSentinelAndClusterURLs() throws {
        let sentinel = try RedisDeployment(string: "redis-sentinel://alice:s%40cret@10.0.0.1:26380,10.0.0.2,[::1]:26381/my%20master/3?prefix=x")
        #expect(sentinel.topology == .sentinel(sentinels: [RedisNodeAddress(host: "10.0.0.1", port: 26380), RedisNodeAddress(host: "10.0.0.2", port: 26379),
                                                           RedisNodeAddress(host: "::1", port: 26381)], primaryName: "my master"))
        #expect(sentinel.database == 3 && sentinel.username == "alice" && sentinel.password == "s@cret" && sentinel.query == "prefix=x")
        #expect(try RedisDeployment(string: "redis-sentinel://h:1/m").database == 0)

        let cluster = try RedisDeployment(string: "redis-cluster://:pw@127.0.0.1:7000,127.0.0.1:7001/")
        #expect(cluster.topology == .cluster(seeds: [RedisNodeAddress(host: "127.0.0.1", port: 7000), RedisNodeAddress(host: "127.0.0.1", port: 7001)]))
        #expect(cluster.password == "pw" && cluster.username == nil)
        #expect(try RedisDeployment(string: "redis-cluster://node").topology == .cluster(seeds: [RedisNodeAddress(host: "node", port: 6379)]))

        // Foundation's URL cannot hold them: HTTPImageCache.redisURL percent-encodes the host list, which reads back.
        let url = try HTTPImageCache.redisURL("redis-sentinel://alice:s%40cret@10.0.0.1:26380,10.0.0.2/mymaster/3?prefix=x")
        let back = try RedisDeployment(url: url)
        #expect(back.topology == .sentinel(sentinels: [RedisNodeAddress(host: "10.0.0.1", port: 26380), RedisNodeAddress(host: "10.0.0.2", port: 26379)],
                                           primaryName: "mymaster"))
        #expect(back.password == "s@cret" && back.username == "alice" && back.database == 3 && back.query == "prefix=x")
        // The name a warning gives has no credentials.
        #expect(!back.displayName.contains("cret") && !back.displayName.contains("alice"))
        #expect(try #require(try HTTPImageCache(redis: "redis-cluster://127.0.0.1:1,127.0.0.1:2").redisByteStore).client.displayName
            == "Cluster 127.0.0.1:1,127.0.0.1:2")
    }

    @Test(arguments: ["redis-sentinel://h:26379", "redis-sentinel://h:26379/", "redis-sentinel://h/m/x", "redis-sentinel://h/m/1/2",
                      "redis-cluster://h:7000/1", "redis-cluster://h:7000/a", "redis://a:1,b:2/0", "redis-cluster://a:1,,b:2",
                      "redis-cluster://a:0", "redis-cluster://a:70000", "redis-sentinel://[::1/m", "redis-cluster://a b:1"])
    func refusesMalformedSentinelAndClusterURLs(url: String) throws {
        #expect {
            try RedisDeployment(string: url)
        } throws: { error in
            guard case .invalidURL? = error as? RedisCacheError else { return false }
            return true
        }
    }

    @Test func tlsFormsAreRefusedClearly() {
        for url in ["rediss-sentinel://h:1/m", "rediss-cluster://h:1"] {
            #expect(throws: RedisCacheError.tlsUnavailable) { try RedisDeployment(string: url) }
        }
    }
}

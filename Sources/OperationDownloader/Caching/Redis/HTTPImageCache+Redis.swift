import Foundation

extension HTTPImageCache {
    /// A cache shared by every process (and machine) that uses the same Redis deployment and key prefix: a
    /// response one process stores is served to the others without a request, and on a miss only one process
    /// of the fleet fetches the URL (single-flight). RFC 9111's shared-cache rules apply (`private` is not
    /// stored, `s-maxage` counts). This process's memory layer stays in front. See Docs/Scaling.md.
    ///
    /// - Parameters:
    ///   - url: `redis://[user:password@]host:port[/db]` (one server: `AUTH` with an ACL user or the default one,
    ///     then `SELECT db`); `redis-sentinel://[user:password@]host:port[,host:port…]/mastername[/db]` (the
    ///     primary the Sentinels name, followed across failovers); `redis-cluster://[user:password@]host:port[,host:port…]`
    ///     (a Cluster, from any of its nodes). Foundation's `URL` cannot hold several `host:port` pairs: pass
    ///     such a URL as a string (`init(redis: String, …)`), or percent-encode the host list. Query parameters
    ///     may set the other options (`?prefix=...&max_ttl=...`, see `RedisCacheOptions.queryParameters`) and win
    ///     over `keyPrefix`.
    ///   - keyPrefix: keys are `<keyPrefix>:v2:{<SHA-256 of the cache key>}`.
    ///   - memoryCapacity: bytes of bodies kept in this process's memory (0 disables the memory layer).
    /// - Throws: `RedisCacheError` for another scheme, a malformed URL or `rediss://` (no TLS in this client).
    ///   An unreachable server does not throw: downloads then go to the origin, one warning goes to
    ///   `warningHandler`, and the server is tried again in the background.
    public convenience init(redis url: URL, keyPrefix: String = "od", memoryCapacity: Int = 20 * 1024 * 1024) throws {
        try self.init(redis: url.absoluteString, options: RedisCacheOptions(keyPrefix: keyPrefix), memoryCapacity: memoryCapacity)
    }

    /// A cache on Redis with every option (`RedisCacheOptions`: TTL cap, body size limit, timeouts,
    /// single-flight); see `init(redis:keyPrefix:memoryCapacity:)`.
    public convenience init(redis url: URL, options: RedisCacheOptions, memoryCapacity: Int = 20 * 1024 * 1024) throws {
        try self.init(redis: url.absoluteString, options: options, memoryCapacity: memoryCapacity)
    }

    /// `init(redis:keyPrefix:memoryCapacity:)` with the URL as a string, in any of its forms — also
    /// `redis-sentinel://a:26379,b:26379/mymaster` and `redis-cluster://a:7000,b:7001`, which `URL(string:)` refuses.
    public convenience init(redis url: String, keyPrefix: String = "od", memoryCapacity: Int = 20 * 1024 * 1024) throws {
        try self.init(redis: url, options: RedisCacheOptions(keyPrefix: keyPrefix), memoryCapacity: memoryCapacity)
    }

    /// `init(redis:options:memoryCapacity:)` with the URL as a string.
    public convenience init(redis url: String, options: RedisCacheOptions, memoryCapacity: Int = 20 * 1024 * 1024) throws {
        let deployment = try RedisDeployment(string: url)
        let options = try options.applying(query: deployment.query)
        let telemetry = CacheTelemetry()
        let client = RedisClient(deployment: deployment, options: options, events: RedisEvents(telemetry: telemetry))
        let keys = RedisKeySpace(prefix: options.keyPrefix)
        let flights = options.singleFlight ? HTTPCacheFlights(locks: RedisFlightLocks(client: client, keys: keys, options: options)) : nil
        let tier = HTTPCacheTier(
            storage: "redis", bytes: RedisByteStore(client: client, keys: keys, failoverWait: options.lockTimeout),
            maximumBodySize: max(0, options.maximumBodySize),
            lifetime: HTTPCacheEntryLifetime(maximum: options.maximumTimeToLive, revalidationGrace: options.revalidationGrace))
        let layer = HTTPCacheLayer(tiers: [tier], memoryCapacity: max(0, memoryCapacity), isShared: true, telemetry: telemetry,
                                   flights: flights, queueLabel: "OperationDownloader.HTTPImageCache.redis")
        self.init(layer: layer, directory: nil, disk: nil, diskCapacity: 0, memoryCapacity: memoryCapacity)
    }

    /// `string` (a Redis, Sentinel or Cluster URL) as a `URL` that `init(redis:)` reads back the same: several
    /// `host:port` pairs are percent-encoded into the host. Throws `RedisCacheError` as `init(redis:)` does.
    public static func redisURL(_ string: String) throws -> URL {
        let deployment = try RedisDeployment(string: string)
        guard let url = deployment.url(withCredentials: true) else { throw RedisCacheError.invalidURL("cannot be written as a URL") }
        return url
    }

    /// Whether the entries live on a Redis server shared by a fleet (`init(redis:...)`).
    public var isShared: Bool { layer.isShared }
}

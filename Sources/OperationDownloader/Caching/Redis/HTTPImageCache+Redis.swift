import Foundation

extension HTTPImageCache {
    /// A cache shared by every process (and machine) that uses the same Redis server and key prefix: a
    /// response one process stores is served to the others without a request, and on a miss only one process
    /// of the fleet fetches the URL (single-flight). RFC 9111's shared-cache rules apply (`private` is not
    /// stored, `s-maxage` counts). This process's memory layer stays in front. See Docs/Scaling.md.
    ///
    /// - Parameters:
    ///   - url: `redis://[user:password@]host:port[/db]` (`AUTH` with an ACL user or the default one, then
    ///     `SELECT db`); query parameters may set the other options (`?prefix=...&max_ttl=...`, see
    ///     `RedisCacheOptions.queryParameters`) and win over `keyPrefix`.
    ///   - keyPrefix: keys are `<keyPrefix>:v1:<SHA-256 of the cache key>`.
    ///   - memoryCapacity: bytes of bodies kept in this process's memory (0 disables the memory layer).
    /// - Throws: `RedisCacheError` for another scheme, a malformed URL, `rediss://` (no TLS in this client) or
    ///   a missing hiredis library. An unreachable server does not throw: downloads then go to the origin, one
    ///   warning goes to `warningHandler`, and the connection is retried after a back-off.
    public convenience init(redis url: URL, keyPrefix: String = "od", memoryCapacity: Int = 20 * 1024 * 1024) throws {
        var options = RedisCacheOptions()
        options.keyPrefix = keyPrefix
        try self.init(redis: url, options: options, memoryCapacity: memoryCapacity)
    }

    /// A cache on Redis with every option (`RedisCacheOptions`: TTL cap, body size limit, timeouts,
    /// single-flight); see `init(redis:keyPrefix:memoryCapacity:)`.
    public convenience init(redis url: URL, options: RedisCacheOptions, memoryCapacity: Int = 20 * 1024 * 1024) throws {
        let endpoint = try RedisEndpoint(url: url)
        let options = try options.applying(queryOf: url)
        if case .failure(let error) = HiredisLibrary.loaded { throw error }
        let telemetry = CacheTelemetry()
        let pool = RedisConnectionPool(endpoint: endpoint, options: options, telemetry: telemetry)
        let keys = RedisKeySpace(prefix: options.keyPrefix)
        let flights = options.singleFlight ? HTTPCacheFlights(locks: RedisFlightLocks(pool: pool, keys: keys, options: options)) : nil
        let tier = HTTPCacheTier(
            storage: "redis", bytes: RedisByteStore(pool: pool, keys: keys), maximumBodySize: max(0, options.maximumBodySize),
            lifetime: HTTPCacheEntryLifetime(maximum: options.maximumTimeToLive, revalidationGrace: options.revalidationGrace))
        let layer = HTTPCacheLayer(tiers: [tier], memoryCapacity: max(0, memoryCapacity), isShared: true, telemetry: telemetry,
                                   flights: flights, queueLabel: "OperationDownloader.HTTPImageCache.redis")
        self.init(layer: layer, directory: nil, disk: nil, diskCapacity: 0, memoryCapacity: memoryCapacity)
    }

    /// Whether the entries live on a Redis server shared by a fleet (`init(redis:...)`).
    public var isShared: Bool { layer.isShared }
}

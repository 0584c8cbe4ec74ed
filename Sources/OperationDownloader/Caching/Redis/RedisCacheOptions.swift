import Foundation

/// How an `HTTPImageCache` uses Redis (`HTTPImageCache(redis:options:memoryCapacity:)`). The defaults suit a
/// fleet on one network; see Docs/Scaling.md.
public struct RedisCacheOptions: Sendable, Equatable {
    /// Keys are `<keyPrefix>:v2:{<SHA-256 of the cache key>}`; caches with different prefixes share nothing.
    public var keyPrefix: String = "od"
    /// The longest time any key lives (its TTL is otherwise the entry's freshness, plus its
    /// stale-while-revalidate / stale-if-error windows, plus `revalidationGrace` when it has validators).
    public var maximumTimeToLive: TimeInterval = 7 * 86_400
    /// How long past its windows an entry with validators (ETag, Last-Modified) is kept, so that a later
    /// request can revalidate it with a 304 instead of fetching the body again.
    public var revalidationGrace: TimeInterval = 86_400
    /// Bodies larger than this are not stored (Redis values are held in memory and sent whole).
    public var maximumBodySize: Int = 8 * 1024 * 1024
    /// Bound on connecting (name resolution included) to the server.
    public var connectTimeout: TimeInterval = 0.25
    /// Bound on each pipeline: its writes and all of its replies (not each `recv`).
    public var commandTimeout: TimeInterval = 1
    /// Fleet-wide single-flight: on a miss or a needed revalidation only one process fetches a URL; the
    /// others wait for the entry it stores.
    public var singleFlight: Bool = true
    /// The lifetime of a single-flight lock: the lock of a process that died is taken over after at most
    /// this long. The holder renews it while its download runs. Also how long a Sentinel or Cluster failover is
    /// waited for (single-flight holds meanwhile) before the cache steps aside.
    public var lockTimeout: TimeInterval = 10
    /// The longest a download waits for another process's fetch before it fetches the URL itself.
    public var maximumWait: TimeInterval = 30
    /// Idle connections kept open (more are opened while more threads use the cache at once).
    public var maximumIdleConnections: Int = 8
    /// After a failure (server down, timeout, AUTH refused) the node is bypassed for this long, then a probe in
    /// the background (never a download) tries it again; each failed try doubles the wait, up to
    /// `maximumRetryInterval`. The probe's success brings the cache (and single-flight) back at once.
    public var retryInterval: TimeInterval = 1
    public var maximumRetryInterval: TimeInterval = 2

    public init() {}

    /// The options with `keyPrefix` set.
    public init(keyPrefix: String) {
        self.keyPrefix = keyPrefix
    }
}

import Foundation

/// The connections of one Redis cache: idle ones are reused (at most `maximumIdle` kept), a new one is opened
/// when every connection is busy, and a broken one is dropped. Every call goes through the circuit breaker,
/// so a server that is down, slow or refusing the password costs one timeout per back-off interval, not one
/// per download; the start of each outage is reported once (a warning through the cache's log hook), and every
/// error and breaker change to its metrics (`telemetry`).
final class RedisConnectionPool: @unchecked Sendable {  // `lock` guards `idle` and `breaker`
    let endpoint: RedisEndpoint
    private let options: RedisCacheOptions
    private let lock = NSLock()
    private var idle: [RedisConnection] = []
    private var breaker: RedisCircuitBreaker
    private let clock: @Sendable () -> UInt64
    private let telemetry: CacheTelemetry

    init(endpoint: RedisEndpoint, options: RedisCacheOptions, clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
         telemetry: CacheTelemetry) {
        self.endpoint = endpoint
        self.options = options
        self.clock = clock
        self.telemetry = telemetry
        self.breaker = RedisCircuitBreaker(initialInterval: options.retryInterval, maximumInterval: options.maximumRetryInterval)
    }

    /// Runs `commands` as one pipeline on a pooled connection: their replies in order, or nil when Redis is
    /// unavailable (the breaker is open, or this call failed: then it opens).
    func pipeline(_ commands: [[Data]]) -> [RedisReply]? {
        guard !commands.isEmpty else { return [] }
        let admitted: (Bool, RedisConnection?) = lock.withLock {
            guard breaker.admit(now: clock()) else { return (false, nil) }
            return (true, idle.popLast())
        }
        guard admitted.0 else { return nil }
        do throws(RedisConnectionFailure) {
            let connection: RedisConnection
            if let reused = admitted.1 {
                connection = reused
            } else {
                connection = try RedisConnection(
                    endpoint: endpoint, connectTimeout: options.connectTimeout, commandTimeout: options.commandTimeout)
            }
            let replies = try connection.pipeline(commands)
            let recovered = lock.withLock {
                defer { if idle.count < max(1, options.maximumIdleConnections) { idle.append(connection) } }
                return breaker.succeeded()
            }
            if recovered { back() }
            for reply in replies where reply.errorMessage != nil { telemetry.redisError("reply") }
            return replies
        } catch {
            failed(error)
            return nil
        }
    }

    /// One command; nil when Redis is unavailable.
    func command(_ arguments: [Data]) -> RedisReply? {
        pipeline([arguments])?.first
    }

    private func failed(_ error: RedisConnectionFailure) {
        let (transition, dropped): (RedisCircuitBreaker.Transition, [RedisConnection]) = lock.withLock {
            let transition = breaker.failed(now: clock())
            // The idle connections share the fate of the one that failed (a restarted or unreachable server).
            defer { idle.removeAll() }
            return (transition, idle)
        }
        _ = dropped
        telemetry.redisError(error.kind.rawValue)
        if case .opened(let retryIn) = transition {
            telemetry.redisBreaker(opened: true)
            telemetry.logger.log(
                .warning, "HTTPImageCache: Redis at \(endpoint.displayName) is unavailable (\(error.reason)); downloads go to the "
                    + "origin without the shared cache, retrying in \(Self.seconds(retryIn))",
                metadata: ["redis.endpoint": endpoint.displayName, "error": error.reason, "retry_in": Self.seconds(retryIn)])
        }
    }

    /// The breaker closed again: the outage is over.
    private func back() {
        telemetry.redisBreaker(opened: false)
        telemetry.logger.log(
            .info, "HTTPImageCache: Redis at \(endpoint.displayName) is back; the shared cache is used again",
            metadata: ["redis.endpoint": endpoint.displayName])
    }

    private static func seconds(_ value: TimeInterval) -> String {
        value < 1 ? "\(Int(value * 1000)) ms" : "\(Int(value.rounded())) s"
    }
}

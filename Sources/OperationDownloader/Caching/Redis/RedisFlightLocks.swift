import Foundation

/// The Redis side of fleet-wide single-flight: one key per cache key (`RedisKeySpace.lockKey`, in the slot of
/// the entry it guards) whose value says who fetches it.
///
/// - `SET lock <token> NX PX <lockTimeout>`: the process whose SET succeeds fetches; its token — 128 random bits,
///   new for every flight — is what it owns. It renews the expiry while its download runs; a holder that dies
///   or stalls stops renewing and the key expires, so one waiter can take it over.
/// - The holder ends its flight by replacing its token with `done` (short expiry): waiters then read the entry
///   it stored, or fetch for themselves when it stored none. A holder that gives up (cancelled, failed) deletes
///   the key instead, and one waiter takes over.
/// - Renewal, `done` and deletion are scripts that first compare the value with the caller's token, in one step
///   inside Redis: a holder whose lock expired (it was paused, or a failover lost the key) never extends,
///   ends or deletes a successor's.
/// - Reads are bounded: a lock's value is read as a 64-byte prefix (`GETRANGE`), with its `PTTL`. Whatever is not
///   a lock this cache wrote — another type (WRONGTYPE), a value without expiry — and any error reply is
///   `.refused`: single-flight steps aside for that URL and the download fetches at once.
struct RedisFlightLocks: Sendable {
    static let doneMarker = Data("done".utf8)
    /// The longest lock value read: tokens are 32 hex digits, `done` is 4.
    static let valuePrefixLength = 64

    let client: RedisClient
    let keys: RedisKeySpace
    let options: RedisCacheOptions

    /// What trying a lock came to.
    enum Acquired: Equatable {
        case taken
        /// Another holder has it.
        case held
        /// Redis answered with an error (OOM, READONLY, NOAUTH, WRONGTYPE, …): no single-flight for this key.
        case refused(String)
        case unavailable(RedisUnavailable)
    }

    /// What a lock says now.
    enum Observed: Equatable {
        /// A process holds it (maybe this one).
        case held
        /// Its holder finished: the entry is stored, or the response was not storable.
        case done
        /// Nobody holds it (never taken, given up, or its holder died and it expired).
        case free
        /// Not a lock this cache wrote, or an error reply: no single-flight for this key.
        case refused(String)
        case unavailable(RedisUnavailable)
    }

    var lockMilliseconds: Int { max(1, Int(options.lockTimeout * 1000)) }
    /// The `done` marker outlives many polls of every waiter (one a few tens of milliseconds); a waiter that
    /// misses it finds the lock free, takes it, and finds the entry stored.
    let doneMilliseconds = 3000

    /// A new flight's token: 128 random bits in hex.
    static func newToken() -> Data {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next(), generator.next()] as [UInt64]
        return Data(words.map { String(format: "%016llx", $0) }.joined().utf8)
    }

    /// Tries to take the locks of `flights`, each with its token (one pipeline). `confirming`: a retry of an
    /// earlier try whose answer was lost (a failover) — a lock that already holds the token is that flight's.
    func acquire(_ flights: [(name: String, token: Data)], confirming: Bool = false) -> [Acquired] {
        var requests: [RedisRequest] = []
        for (name, token) in flights {
            let key = keys.lockKey(name)
            requests.append(RedisRequest(RedisCommand.make("SET", key, token, "NX", "PX", lockMilliseconds), key: key))
            if confirming { requests.append(valueRequest(key)) }
        }
        let results = client.pipeline(requests)
        let step = confirming ? 2 : 1
        return flights.indices.map { index in
            let token = flights[index].token
            switch results[index * step] {
            case .failure(let unavailable): return .unavailable(unavailable)
            case .success(let reply):
                if reply.isOK { return .taken }
                if let message = reply.errorMessage { return .refused(message) }
                guard reply == .null else { return .refused("SET NX answered \(Self.describe(reply))") }
                if confirming, case .success(.string(let value)) = results[index * step + 1], value == token { return .taken }
                return .held
            }
        }
    }

    /// What each lock says now (one pipeline: a bounded prefix of each value, and its expiry).
    func observe(_ names: [String]) -> [Observed] {
        var requests: [RedisRequest] = []
        for name in names {
            let key = keys.lockKey(name)
            requests.append(valueRequest(key))
            requests.append(RedisRequest(RedisCommand.make("PTTL", key), key: key))
        }
        let results = client.pipeline(requests)
        return names.indices.map { index in
            switch (results[2 * index], results[2 * index + 1]) {
            case (.failure(let unavailable), _), (_, .failure(let unavailable)):
                return .unavailable(unavailable)
            case (.success(let value), .success(let expiry)):
                if let message = value.errorMessage ?? expiry.errorMessage { return .refused(message) }
                guard case .string(let prefix) = value, case .integer(let milliseconds) = expiry else {
                    return .refused("the lock read answered \(Self.describe(value))")
                }
                if milliseconds == -2 { return .free }  // no key (GETRANGE of a missing key is "")
                if milliseconds == -1 { return .refused("the lock key has no expiry: it was not written by this cache") }
                if prefix == Self.doneMarker { return .done }
                return prefix.isEmpty ? .refused("the lock key holds an empty string") : .held
            }
        }
    }

    /// The holder's flight ended with a response: its token becomes `done`. Lands on the new primary if a
    /// failover is under way (waiting at most a lock's lifetime).
    func finish(_ name: String, token: Data) {
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return 0"
        let key = keys.lockKey(name)
        _ = client.pipelineAcrossFailover([RedisRequest(RedisCommand.make("EVAL", script, 1, key, token, Self.doneMarker, doneMilliseconds),
                                                        key: key)], until: RedisDeadline(in: options.lockTimeout))
    }

    /// The holder gives up without a response: the key goes, and a waiter takes over.
    func release(_ name: String, token: Data) {
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        let key = keys.lockKey(name)
        _ = client.pipelineAcrossFailover([RedisRequest(RedisCommand.make("EVAL", script, 1, key, token), key: key)],
                                          until: RedisDeadline(in: options.lockTimeout))
    }

    /// Renews the expiry of the locks this process holds (one pipeline); the names whose lock is no longer
    /// theirs (it expired and was taken, or a failover lost it).
    @discardableResult
    func renew(_ held: [(name: String, token: Data)]) -> [String] {
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
        let requests = held.map { entry in
            let key = keys.lockKey(entry.name)
            return RedisRequest(RedisCommand.make("EVAL", script, 1, key, entry.token, lockMilliseconds), key: key)
        }
        return zip(held, client.pipeline(requests)).compactMap { entry, result in
            if case .success(.integer(0)) = result { return entry.name }
            return nil
        }
    }

    private func valueRequest(_ key: Data) -> RedisRequest {
        RedisRequest(RedisCommand.make("GETRANGE", key, 0, Self.valuePrefixLength - 1), key: key,
                     limits: RESPLimits.standard.bulk(Self.valuePrefixLength))
    }

    private static func describe(_ reply: RedisReply) -> String {
        switch reply {
        case .string: return "a string"
        case .status(let status): return "+\(status.prefix(40))"
        case .error(let message): return message
        case .integer(let value): return ":\(value)"
        case .null: return "null"
        case .array, .push: return "an array"
        }
    }
}

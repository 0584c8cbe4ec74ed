import Foundation

/// The Redis side of fleet-wide single-flight: one key per cache key (`RedisKeySpace.lockKey`) whose value
/// says who fetches it.
///
/// - `SET lock <token> NX PX <lockTimeout>`: the process whose SET succeeds fetches; its random token proves
///   ownership. The holder renews the expiry while its download runs; a holder that dies stops renewing and
///   the key expires, so one waiter can take it over.
/// - The holder ends its flight by replacing its token with `done` (short expiry): waiters then read the entry
///   it stored, or fetch for themselves when it stored none. A holder that gives up (cancelled, failed)
///   deletes the key instead, and one waiter takes over.
/// Each change of a held key is a script that first checks the token, so a holder whose lock expired and was
/// taken over can never touch its successor's.
struct RedisFlightLocks: Sendable {
    static let doneMarker = Data("done".utf8)

    let pool: RedisConnectionPool
    let keys: RedisKeySpace
    let options: RedisCacheOptions

    enum Observed: Equatable {
        /// A process holds it (maybe this one).
        case held
        /// Its holder finished: the entry is stored, or the response was not storable.
        case done
        /// Nobody holds it (never taken, given up, or its holder died and it expired).
        case free
    }

    var lockMilliseconds: Int { max(1, Int(options.lockTimeout * 1000)) }
    /// The `done` marker outlives many polls of every waiter (one a few tens of milliseconds); a waiter that
    /// misses it finds the lock free, takes it, and finds the entry stored.
    let doneMilliseconds = 3000

    /// Tries to take the locks of `names` (one pipeline): whether each was taken, nil when Redis is unavailable.
    func acquire(_ names: [String], token: Data) -> [Bool]? {
        let replies = pool.pipeline(names.map { RedisCommand.make("SET", keys.lockKey($0), token, "NX", "PX", lockMilliseconds) })
        return replies?.map(\.isOK)
    }

    /// What each lock says now (one pipeline), or nil when Redis is unavailable.
    func observe(_ names: [String]) -> [Observed]? {
        pool.pipeline(names.map { RedisCommand.make("GET", keys.lockKey($0)) })?.map { reply in
            switch reply {
            case .string(let value): return value == Self.doneMarker ? .done : .held
            case .null: return .free
            default: return .held
            }
        }
    }

    /// The holder's flight ended with a response: its token becomes `done`.
    func finish(_ name: String, token: Data) {
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return 0"
        _ = pool.command(RedisCommand.make("EVAL", script, 1, keys.lockKey(name), token, Self.doneMarker, doneMilliseconds))
    }

    /// The holder gives up without a response: the key goes, and a waiter takes over.
    func release(_ name: String, token: Data) {
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        _ = pool.command(RedisCommand.make("EVAL", script, 1, keys.lockKey(name), token))
    }

    /// Renews the expiry of the locks this process holds (one pipeline).
    func renew(_ held: [(name: String, token: Data)]) {
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
        _ = pool.pipeline(held.map { RedisCommand.make("EVAL", script, 1, keys.lockKey($0.name), $0.token, lockMilliseconds) })
    }
}

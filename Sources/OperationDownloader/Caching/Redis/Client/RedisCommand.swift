import Foundation

/// Something that can be a command argument: bytes, text, a number.
protocol RedisArgument {
    var redisBytes: Data { get }
}

extension Data: RedisArgument {
    var redisBytes: Data { self }
}

extension String: RedisArgument {
    var redisBytes: Data { Data(utf8) }
}

extension Int: RedisArgument {
    var redisBytes: Data { Data(String(self).utf8) }
}

/// Builds a command's arguments: `RedisCommand.make("SET", key, value, "PX", 1000)`.
enum RedisCommand {
    static func make(_ arguments: any RedisArgument...) -> [Data] {
        arguments.map(\.redisBytes)
    }

    static func make(_ name: String, _ arguments: [Data]) -> [Data] {
        [Data(name.utf8)] + arguments
    }
}

/// One command for `RedisClient`: its arguments, the key that routes it to its node (a Cluster's slot; every
/// command the cache sends names one key, or none), and how large its reply may be.
struct RedisRequest: Sendable {
    var arguments: [Data]
    var key: Data?
    var limits: RESPLimits

    init(_ arguments: [Data], key: Data?, limits: RESPLimits = .standard) {
        self.arguments = arguments
        self.key = key
        self.limits = limits
    }
}

/// Why a request got no reply.
enum RedisUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    /// The node (or every Sentinel, or the Cluster) is down, refusing or slow: go on without Redis.
    case down(String)
    /// A Sentinel or Cluster lost a primary and is promoting another (`RedisClient.waitForFailover`): waiting
    /// for it keeps single-flight, for at most the lock's lifetime from the loss.
    case failingOver(String)

    var description: String {
        switch self {
        case .down(let reason): return reason
        case .failingOver(let reason): return "failing over: \(reason)"
        }
    }

    var isFailingOver: Bool {
        if case .failingOver = self { return true }
        return false
    }
}

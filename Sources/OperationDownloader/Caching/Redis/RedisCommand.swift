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

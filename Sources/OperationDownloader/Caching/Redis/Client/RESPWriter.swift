import Foundation

/// Writes commands as RESP arrays of bulk strings (how every Redis client sends them), several into one
/// buffer for a pipeline.
enum RESPWriter {
    static func append(_ arguments: [Data], to buffer: RedisByteBuffer) {
        buffer.append("*")
        buffer.appendDecimal(arguments.count)
        buffer.append("\r\n")
        for argument in arguments {
            buffer.append("$")
            buffer.appendDecimal(argument.count)
            buffer.append("\r\n")
            buffer.append(argument)
            buffer.append("\r\n")
        }
    }

    static func encode(_ commands: [[Data]]) -> RedisByteBuffer {
        let buffer = RedisByteBuffer()
        buffer.reserveSpace(commands.reduce(0) { total, command in total + command.reduce(16) { $0 + $1.count + 16 } })
        for command in commands { append(command, to: buffer) }
        return buffer
    }
}

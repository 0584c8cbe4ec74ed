import Foundation

/// Writes commands as RESP arrays of bulk strings (how every Redis client sends them), several into one
/// buffer for a pipeline.
enum RESPWriter {
    static func append(_ arguments: [Data], to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "*"))
        appendDecimal(arguments.count, to: &buffer)
        for argument in arguments {
            buffer.append(UInt8(ascii: "$"))
            appendDecimal(argument.count, to: &buffer)
            buffer.append(contentsOf: argument)
            buffer.append(13)
            buffer.append(10)
        }
    }

    static func encode(_ commands: [[Data]]) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(commands.reduce(0) { total, command in total + command.reduce(16) { $0 + $1.count + 16 } })
        for command in commands { append(command, to: &buffer) }
        return buffer
    }

    /// `value` in decimal, then CRLF.
    private static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: String(value).utf8)
        buffer.append(13)
        buffer.append(10)
    }
}

import CHiredis
import Foundation

/// Why a connection cannot be used (it is then closed): the server cannot be reached, a reply did not come
/// within the timeout, the connection broke, or the server refused to log in or select the database.
struct RedisConnectionFailure: Error, Sendable, CustomStringConvertible {
    /// What failed, as `od_redis_errors_total`'s `kind` says it.
    enum Kind: String, Sendable {
        case connect, timeout, io, auth
    }

    let reason: String
    var kind: Kind = .io
    var description: String { reason }
}

/// One connection to Redis through hiredis, used by one thread at a time (`RedisConnectionPool` hands it
/// out). Blocking I/O within the timeouts: connecting within `connectTimeout`, every reply within
/// `commandTimeout`. After any failure the connection is unusable and is closed.
final class RedisConnection {
    private let context: OpaquePointer
    private(set) var isBroken = false

    /// Connects, logs in (`AUTH`) and selects the database.
    init(endpoint: RedisEndpoint, connectTimeout: TimeInterval, commandTimeout: TimeInterval) throws(RedisConnectionFailure) {
        if let reason = HiredisLibrary.unavailableReason { throw RedisConnectionFailure(reason: reason) }
        var code: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        guard let context = chiredis_connect(endpoint.host, Int32(endpoint.port), Self.milliseconds(connectTimeout),
                                             &code, &message, message.count) else {
            throw RedisConnectionFailure(reason: "cannot connect to \(endpoint.displayName): \(Self.string(message))", kind: .connect)
        }
        // From here `deinit` frees the context, also when this initializer throws.
        self.context = context
        guard chiredis_set_timeout(context, Self.milliseconds(commandTimeout)) == 0 else {
            throw RedisConnectionFailure(reason: "cannot set the command timeout on \(endpoint.displayName)")
        }
        var setup: [[Data]] = []
        if let password = endpoint.password {
            setup.append(([Data("AUTH".utf8)] + (endpoint.username.map { [Data($0.utf8)] } ?? []) + [Data(password.utf8)]))
        }
        if endpoint.database != 0 { setup.append([Data("SELECT".utf8), Data(String(endpoint.database).utf8)]) }
        guard !setup.isEmpty else { return }
        let replies = try pipeline(setup)
        for (command, reply) in zip(setup, replies) {
            guard let message = reply.errorMessage else { continue }
            let name = String(decoding: command[0], as: UTF8.self)
            throw RedisConnectionFailure(reason: "\(endpoint.displayName) refused \(name): \(message)", kind: .auth)
        }
    }

    deinit {
        chiredis_free(context)
    }

    /// Sends `commands` in one write and reads their replies in order (pipelining). Error replies are
    /// returned, not thrown; a connection failure (timeout, reset, EOF) throws and breaks the connection.
    func pipeline(_ commands: [[Data]]) throws(RedisConnectionFailure) -> [RedisReply] {
        guard !isBroken else { throw RedisConnectionFailure(reason: "connection already failed") }
        for command in commands {
            let appended = Self.withArguments(command) { argv, lengths in
                chiredis_append(context, Int32(command.count), argv, lengths)
            }
            guard appended == 0 else { throw fail("cannot queue a command") }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            guard chiredis_get_reply(context, &raw) == 0, let reply = raw else { throw fail(nil) }
            replies.append(RedisReply(hiredis: reply))
            chiredis_free_reply(reply)
        }
        return replies
    }

    /// One command.
    func command(_ arguments: [Data]) throws(RedisConnectionFailure) -> RedisReply {
        try pipeline([arguments])[0]
    }

    private func fail(_ fallback: String?) -> RedisConnectionFailure {
        isBroken = true
        var message = [CChar](repeating: 0, count: 256)
        let code = chiredis_context_error(context, &message, message.count)
        var text = Self.string(message)
        if text.isEmpty { text = fallback ?? "connection failed" }
        // hiredis reports a read timeout as an I/O error with EAGAIN's text.
        var kind = RedisConnectionFailure.Kind.io
        if Int(code) == CHIREDIS_ERR_IO, text.contains("Resource temporarily unavailable") {
            text = "no reply within the command timeout"
            kind = .timeout
        }
        return RedisConnectionFailure(reason: text, kind: kind)
    }

    private static func milliseconds(_ seconds: TimeInterval) -> Int32 {
        Int32(clamping: Int((max(0.001, min(seconds, 3600)) * 1000).rounded(.up)))
    }

    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `body` with argv/argvlen arrays pointing into `arguments` (valid only during the call).
    private static func withArguments<R>(_ arguments: [Data],
                                         _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        let lengths = arguments.map(\.count)
        // One contiguous buffer: Data's storage is not addressable outside withUnsafeBytes, and nesting closures
        // per argument does not scale to a variable count.
        var joined = [UInt8]()
        joined.reserveCapacity(lengths.reduce(0, +) + 1)
        for argument in arguments { joined.append(contentsOf: argument) }
        joined.append(0)
        return joined.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(arguments.count)
            var offset = 0
            for length in lengths {
                pointers.append(base + offset)
                offset += length
            }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { body(argv.baseAddress!, $0.baseAddress!) }
            }
        }
    }
}

import Foundation

/// Why a connection cannot be used (it is then closed). `kind` is what a metric counts (issue 38's
/// `od_redis_errors_total{kind}`); `reason` is what a person reads.
struct RedisConnectionFailure: Error, Sendable, CustomStringConvertible {
    enum Kind: String, Sendable {
        /// The name did not resolve, or nothing accepted the connection in time.
        case unreachable
        /// A reply (or a write) did not complete within its deadline.
        case timeout
        /// The server closed or reset the connection.
        case closed
        /// What came back is not RESP, or is larger than the command allows.
        case protocolError = "protocol"
        /// The server refused to log in or select the database (AUTH, NOAUTH, SELECT).
        case refused
        /// The node is not a primary (Sentinel and Cluster send writes to primaries only).
        case notPrimary = "not_primary"
    }

    let kind: Kind
    let reason: String
    var description: String { reason }

    init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }
}

/// One connection to a Redis node, used by one thread at a time (`RedisConnectionPool` hands it out): the
/// package's own RESP client over a TCP socket. Connecting (name resolution included) is bounded by
/// `connectTimeout`; each pipeline — its writes and every one of its replies, however the server spreads the
/// bytes over time — by `commandTimeout`. Each reply is bounded in size by its command's `RESPLimits` before
/// anything is allocated. After any failure the connection is unusable and is closed.
final class RedisConnection {
    /// What the connection checks once logged in.
    enum Role: Sendable {
        /// Any data node (a standalone server).
        case any
        /// A primary: `ROLE` must say "master" (a Sentinel's primary, whose role changes in a failover).
        case primary
        /// A Sentinel: `AUTH` only when the URL has credentials, tolerating a Sentinel without a password; no `SELECT`.
        case sentinel
    }

    let endpoint: RedisEndpoint
    private let socket: RedisSocket
    private let commandTimeout: TimeInterval
    private let input = RedisByteBuffer()
    private(set) var isBroken = false

    /// Connects, logs in (`AUTH`), selects the database and checks the role, in one round trip.
    init(endpoint: RedisEndpoint, connectTimeout: TimeInterval, commandTimeout: TimeInterval, role: Role = .any) throws(RedisConnectionFailure) {
        self.endpoint = endpoint
        self.commandTimeout = commandTimeout
        let deadline = RedisDeadline(in: connectTimeout)
        let addresses = try RedisAddressResolver.resolve(host: endpoint.host, port: endpoint.port, deadline: deadline)
        socket = try RedisSocket.connect(to: addresses, name: endpoint.displayName, deadline: deadline)
        var setup: [[Data]] = []
        if let password = endpoint.password {
            setup.append([Data("AUTH".utf8)] + (endpoint.username.map { [Data($0.utf8)] } ?? []) + [Data(password.utf8)])
        }
        if endpoint.database != 0, role != .sentinel { setup.append([Data("SELECT".utf8), Data(String(endpoint.database).utf8)]) }
        if role == .primary { setup.append([Data("ROLE".utf8)]) }
        guard !setup.isEmpty else { return }
        let replies = try pipeline(setup)
        for (command, reply) in zip(setup, replies) {
            let name = String(decoding: command[0], as: UTF8.self)
            if let message = reply.errorMessage {
                // A Sentinel without a password answers AUTH with this: nothing is protected, nothing is lost.
                if role == .sentinel, name == "AUTH", message.contains("without any password configured") { continue }
                // A user without the ROLE command cannot check it: a write to a replica still answers READONLY.
                if name == "ROLE" { continue }
                isBroken = true
                throw RedisConnectionFailure(.refused, "\(endpoint.displayName) refused \(name): \(message)")
            }
            if name == "ROLE", let kind = reply.elements?.first?.text, kind != "master" {
                isBroken = true
                throw RedisConnectionFailure(.notPrimary, "\(endpoint.displayName) is a \(kind == "slave" ? "replica" : kind), not the primary")
            }
        }
    }

    /// Sends `commands` in one write and reads their replies in order (pipelining), all within one
    /// `commandTimeout`; reply `i` may be at most as large as `limits[i]` (`RESPLimits.standard` when not given).
    /// Error replies are returned, not thrown — except NOAUTH, which means this connection cannot do anything.
    /// A connection failure (timeout, reset, EOF, a reply too large or not RESP) throws and breaks the connection.
    func pipeline(_ commands: [[Data]], limits: [RESPLimits]? = nil) throws(RedisConnectionFailure) -> [RedisReply] {
        guard !isBroken else { throw RedisConnectionFailure(.closed, "connection already failed") }
        let deadline = RedisDeadline(in: commandTimeout)
        do throws(RedisConnectionFailure) {
            let output = RESPWriter.encode(commands)
            guard !output.allocationFailed else { throw RedisConnectionFailure(.protocolError, "no memory for the commands") }
            // `bytes` points into `output`'s memory: `output` must outlive the send (ARC may end it at its last use).
            try withExtendedLifetime(output) { () throws(RedisConnectionFailure) in try socket.send(output.bytes, deadline: deadline) }
            var replies: [RedisReply] = []
            replies.reserveCapacity(commands.count)
            for index in commands.indices {
                let reply = try readReply(limits: limits?[index] ?? .standard, deadline: deadline)
                if reply.errorCode == "NOAUTH" {
                    throw RedisConnectionFailure(.refused, "\(endpoint.displayName) requires a password (NOAUTH): give one in the URL")
                }
                replies.append(reply)
            }
            return replies
        } catch {
            isBroken = true
            socket.close()
            throw error
        }
    }

    /// One command.
    func command(_ arguments: [Data], limits: RESPLimits = .standard) throws(RedisConnectionFailure) -> RedisReply {
        try pipeline([arguments], limits: [limits])[0]
    }

    /// Whether this idle connection can be used again: not broken, not closed by the server, nothing unasked
    /// waiting in it.
    var isReusable: Bool { !isBroken && input.isEmpty && socket.isQuiet }

    /// The next reply that answers a command (RESP3 pushes, which answer none, are skipped).
    private func readReply(limits: RESPLimits, deadline: RedisDeadline) throws(RedisConnectionFailure) -> RedisReply {
        var needed = 1
        // Bounded: every turn either returns, throws, or receives at least one byte before the deadline.
        while true {
            if input.count >= needed {
                let read = Result { () throws(RESPReaderError) -> RESPReader.Outcome in try RESPReader.read(input.bytes, limits: limits) }
                guard case .success(let outcome) = read else {
                    throw RedisConnectionFailure(.protocolError, "\(endpoint.displayName) sent \(read.failureValue.map(String.init(describing:)) ?? "?")")
                }
                switch outcome {
                case .reply(let reply, let length):
                    input.consume(length)
                    input.shrinkIfLarge()
                    if case .push = reply {
                        needed = 1
                        continue
                    }
                    return reply
                case .needMore(let atLeast):
                    needed = atLeast
                }
            }
            try receive(atLeast: needed, deadline: deadline)
        }
    }

    /// Receives into `input` until it holds `atLeast` bytes or at least one more arrived, before `deadline`.
    private func receive(atLeast: Int, deadline: RedisDeadline) throws(RedisConnectionFailure) {
        guard input.reserveSpace(max(16 * 1024, min(atLeast - input.count, 1 << 20))), let space = input.spareSpace else {
            throw RedisConnectionFailure(.protocolError, "no memory for a reply of \(atLeast) bytes")
        }
        input.didWrite(try socket.receive(into: space.pointer, capacity: space.count, deadline: deadline))
    }
}

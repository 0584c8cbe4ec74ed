import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking TCP socket whose every step waits with poll(2) until a deadline: connect, send, receive.
/// Writes use MSG_NOSIGNAL, so a server that closed the connection is an error here, never a SIGPIPE.
final class RedisSocket {
    private var descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close()
    }

    func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Connects to the first of `addresses` that accepts before `deadline`.
    static func connect(to addresses: [RedisSocketAddress], name: String, deadline: RedisDeadline) throws(RedisConnectionFailure) -> RedisSocket {
        var lastReason = "no address"
        for address in addresses {
            guard !deadline.hasPassed else { break }
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else {
                lastReason = "socket: \(Self.errorText(errno))"
                continue
            }
            let candidate = RedisSocket(descriptor: fd)
            var storage = address.storage
            let status = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
            }
            if status == 0 || errno == EINPROGRESS {
                if status != 0 {
                    guard candidate.wait(for: Int16(POLLOUT), until: deadline) else {
                        lastReason = "no answer within the connect timeout"
                        continue
                    }
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    guard error == 0 else {
                        lastReason = Self.errorText(error)
                        continue
                    }
                }
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
                return candidate
            }
            lastReason = Self.errorText(errno)
        }
        if deadline.hasPassed, lastReason == "no address" { lastReason = "no answer within the connect timeout" }
        throw RedisConnectionFailure(.unreachable, "cannot connect to \(name): \(lastReason)")
    }

    /// Sends every byte of `bytes` before `deadline`.
    func send(_ bytes: UnsafeRawBufferPointer, deadline: RedisDeadline) throws(RedisConnectionFailure) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let sent = Glibc.send(descriptor, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            if sent > 0 {
                offset += sent
                continue
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent < 0, errno == EAGAIN || errno == EWOULDBLOCK else {
                throw RedisConnectionFailure(.closed, "the connection broke while sending: \(Self.errorText(errno))")
            }
            guard wait(for: Int16(POLLOUT), until: deadline) else {
                throw RedisConnectionFailure(.timeout, "could not send within the command timeout")
            }
        }
    }

    /// Receives what has arrived (at least one byte, at most `capacity`) into `target`, waiting until `deadline`.
    func receive(into target: UnsafeMutableRawPointer, capacity: Int, deadline: RedisDeadline) throws(RedisConnectionFailure) -> Int {
        while true {
            let received = recv(descriptor, target, capacity, Int32(MSG_DONTWAIT))
            if received > 0 { return received }
            if received == 0 { throw RedisConnectionFailure(.closed, "the server closed the connection") }
            if errno == EINTR { continue }
            guard errno == EAGAIN || errno == EWOULDBLOCK else {
                throw RedisConnectionFailure(.closed, "the connection broke: \(Self.errorText(errno))")
            }
            guard wait(for: Int16(POLLIN), until: deadline) else {
                throw RedisConnectionFailure(.timeout, "no reply within the command timeout")
            }
        }
    }

    /// Whether an idle connection is still fit: nothing arrived unasked and the server has not closed it.
    var isQuiet: Bool {
        guard descriptor >= 0 else { return false }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }

    /// Waits until `events` (POLLIN, POLLOUT) or an error is signalled; false once `deadline` has passed.
    private func wait(for events: Int16, until deadline: RedisDeadline) -> Bool {
        while true {
            let timeout = deadline.pollMilliseconds
            guard timeout > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, timeout)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // the next call reports the error
        }
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

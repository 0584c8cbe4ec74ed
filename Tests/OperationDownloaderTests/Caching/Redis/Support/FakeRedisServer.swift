import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import OperationDownloader

/// A server on 127.0.0.1 that speaks just enough RESP to misbehave the way issue 39's attacks did: it reads
/// each command (with the package's own RESP reader) and answers it as `respond` says — slowly, with an error,
/// with a reply far larger than allowed. Threads of its own, every wait bounded (poll with a timeout, a stop
/// flag); `stop()` closes everything.
final class FakeRedisServer: @unchecked Sendable {  // `stopped` and `connections` guarded by `lock`
    /// What the server sends for one command: chunks, each after its delay.
    struct Answer {
        var chunks: [(delay: TimeInterval, bytes: Data)]

        static func now(_ text: String) -> Answer { Answer(chunks: [(0, Data(text.utf8))]) }

        /// `text`, one byte every `interval` seconds.
        static func trickle(_ text: String, every interval: TimeInterval) -> Answer {
            Answer(chunks: Data(text.utf8).map { (interval, Data([$0])) })
        }
    }

    let port: Int
    private let listener: Int32
    private let respond: @Sendable ([Data]) -> Answer
    private let lock = NSLock()
    private var stopped = false
    private var connections: [Int32] = []
    let commandsSeen = Locked<[String]>([])

    init(respond: @escaping @Sendable ([Data]) -> Answer) throws {
        self.respond = respond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RedisServerFailure(message: "socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 16) == 0 else {
            close(fd)
            throw RedisServerFailure(message: "cannot listen on 127.0.0.1")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    var url: URL { URL(string: "redis://127.0.0.1:\(port)/0")! }

    func stop() {
        let open: [Int32] = lock.withLock {
            defer { stopped = true; connections = [] }
            return stopped ? [] : connections + [listener]
        }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        while !isStopped {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0, !isStopped else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let keep = lock.withLock {
                guard !stopped else { return false }
                connections.append(client)
                return true
            }
            if keep { Thread.detachNewThread { [self] in serve(client) } } else { close(client) }
        }
    }

    /// Reads commands and answers each, until the client or `stop()` closes the connection.
    private func serve(_ fd: Int32) {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !isStopped {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) >= 0 else { return }
            guard entry.revents != 0 else { continue }
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { return }
            buffer.append(contentsOf: chunk[0..<count])
            while let (command, length) = (try? RESPReader.read(buffer)) ?? nil {
                buffer.removeFirst(length)
                let arguments = command.elements?.compactMap(\.data) ?? []
                commandsSeen.withLock { $0.append(arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? "?") }
                for (delay, bytes) in respond(arguments).chunks {
                    if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                    guard !isStopped else { return }
                    let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard sent >= 0 else { return }
                }
            }
        }
    }
}

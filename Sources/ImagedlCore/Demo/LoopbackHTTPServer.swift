import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for `imagedl --demo`: GET only, one response per connection
/// (`Connection: close`), bodies from memory, optionally "dripped" in small pieces with pauses so a
/// progressive download is visible, cut short, or resumed from a byte (`Range`). POSIX sockets only, so the demo needs nothing but the tool itself.
final class LoopbackHTTPServer: @unchecked Sendable {  // `lock` guards `listener`, `connections`, `served`
    /// What a path serves.
    struct Resource: Sendable {
        var body: Data
        var contentType: String
        /// Send `chunkSize` bytes, then wait `interval` seconds, until the body is out; nil sends at once.
        var drip: (chunkSize: Int, interval: Double)?
        /// The Cache-Control header: "no-store" by default, so the demo always shows real downloads.
        var cacheControl: String
        /// The first this many requests for the path get `503 Service Unavailable` (to show `--retry`).
        var failFirst: Int
        /// Answer `302 Found` with this `Location` instead of the body (a path pointing at itself is a loop).
        var redirect: String?
        /// The first this many requests (after the `failFirst` ones) get the whole length announced but only half
        /// the body, then the connection closes (a lost connection, to show `--retry` resuming it).
        var cutFirst: Int
        /// A strong ETag: sent with `Accept-Ranges: bytes`, and a `Range: bytes=N-` whose `If-Range` names it is
        /// answered `206` with the rest. nil: no validator, ranges ignored.
        var etag: String?
        /// The status line's code and reason ("404 Not Found": an error page the HTTP cache may store).
        var status: String

        init(body: Data, contentType: String, drip: (chunkSize: Int, interval: Double)? = nil,
             cacheControl: String = "no-store", failFirst: Int = 0, redirect: String? = nil, cutFirst: Int = 0,
             etag: String? = nil, status: String = "200 OK") {
            self.status = status
            self.body = body
            self.contentType = contentType
            self.drip = drip
            self.cacheControl = cacheControl
            self.failFirst = failFirst
            self.redirect = redirect
            self.cutFirst = cutFirst
            self.etag = etag
        }
    }

    /// A GET as this server reads it: the path without its query, and the headers a resume sends.
    private struct Request {
        var path: String
        var range: String?
        var ifRange: String?
    }

    enum StartError: Error, CustomStringConvertible {
        case socket(String)
        var description: String {
            switch self { case .socket(let why): return "cannot start the loopback server: \(why)" }
        }
    }

    /// The port the kernel chose.
    let port: UInt16
    private let routes: [String: Resource]
    private let lock = NSLock()
    private var listener: Int32
    private var connections: Set<Int32> = []
    private var served: [String: Int] = [:]

    /// Listens on 127.0.0.1 at a free port; `routes` maps a path ("/photo.png") to what it serves,
    /// everything else is 404.
    init(routes: [String: Resource]) throws {
        self.routes = routes
        #if canImport(Glibc)
        // Close-on-exec: a process the host spawns must not keep the port listening after `stop()`.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw StartError.socket("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw StartError.socket("bind/listen: \(why)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            close(fd)
            throw StartError.socket("getsockname: \(String(cString: strerror(errno)))")
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        // A thread of its own: it blocks in accept() for the server's life, which would hold a worker of the
        // dispatch pool that Swift's tasks share (two threads on two cores).
        let acceptor = Thread { [self] in acceptLoop(fd) }
        acceptor.name = "imagedl.demo-server.accept"
        acceptor.start()
    }

    deinit { stop() }

    /// The URL of `path` on this server.
    func url(_ path: String) -> URL {
        // A literal loopback address and a path we built ourselves always form a valid URL.
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// Stops accepting and closes every open connection (a drip in progress ends at its next send).
    func stop() {
        let (fd, open) = lock.withLock { () -> (Int32, Set<Int32>) in
            let fd = listener
            listener = -1
            let open = connections
            connections = []
            return (fd, open)
        }
        if fd >= 0 {
            // shutdown wakes the blocked accept(); close alone may not on Linux.
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
        for connection in open { shutdown(connection, Int32(SHUT_RDWR)) }
    }

    private var isRunning: Bool { lock.withLock { listener >= 0 } }

    /// How many GET requests for `path` were answered (with its resource or a 404).
    func requestCount(_ path: String) -> Int { lock.withLock { served[path] ?? 0 } }

    private func acceptLoop(_ fd: Int32) {
        while isRunning {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            // Close-on-exec, like the listener (Glibc's module has no accept4).
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            var yes: Int32 = 1
            // Small dripped writes must leave at once, not wait for Nagle's algorithm.
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let accepted = lock.withLock { () -> Bool in
                guard listener >= 0 else { return false }
                connections.insert(client)
                return true
            }
            guard accepted else {
                close(client)
                return
            }
            // A thread per connection: dripping blocks in usleep/send, which would starve a small
            // dispatch thread pool on a 2-core machine and delay the other responses.
            let thread = Thread { [self] in
                serve(client)
                lock.withLock { _ = connections.remove(client) }
                close(client)
            }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        guard let request = readRequest(fd) else {
            send(fd, head(status: "400 Bad Request", type: "text/plain", length: 0))
            return
        }
        let path = request.path
        let count: Int = lock.withLock {
            served[path, default: 0] += 1
            return served[path, default: 0]
        }
        if let resource = routes[path], count <= resource.failFirst {
            let body = Data("try again\n".utf8)
            if send(fd, head(status: "503 Service Unavailable", type: "text/plain", length: body.count)) { send(fd, body) }
            return
        }
        guard let resource = routes[path] else {
            let body = Data("not found: \(path)\n".utf8)
            if send(fd, head(status: "404 Not Found", type: "text/plain; charset=utf-8", length: body.count)) {
                send(fd, body)
            }
            return
        }
        if let location = resource.redirect {
            send(fd, head(status: "302 Found", type: "text/plain", length: 0, location: location))
            return
        }
        var body = resource.body
        var status = resource.status
        var extra = resource.etag.map { "ETag: \($0)\r\nAccept-Ranges: bytes\r\n" } ?? ""
        if let etag = resource.etag, request.ifRange == nil || request.ifRange == etag,
           let range = request.range, range.hasPrefix("bytes="), range.hasSuffix("-"),
           let first = Int(range.dropFirst(6).dropLast()), first < body.count {
            status = "206 Partial Content"
            extra += "Content-Range: bytes \(first)-\(body.count - 1)/\(body.count)\r\n"
            body = body.subdata(in: first..<body.count)
        }
        let responseHead = head(status: status, type: resource.contentType, length: body.count,
                                cacheControl: resource.cacheControl, extra: extra)
        guard send(fd, responseHead) else { return }
        if count <= resource.failFirst + resource.cutFirst {
            send(fd, body.prefix(body.count / 2))
            return  // the connection closes: the body ends before its length
        }
        guard let drip = resource.drip, drip.chunkSize > 0 else {
            send(fd, body)
            return
        }
        var offset = 0
        while offset < body.count, isRunning {
            let end = min(body.count, offset + drip.chunkSize)
            guard send(fd, body.subdata(in: offset..<end)) else { return }
            offset = end
            if offset < body.count { usleep(useconds_t(max(0, min(10, drip.interval)) * 1_000_000)) }
        }
    }

    /// Reads the request head (at most 16 KB): the path of a GET request without its query, and its `Range` and
    /// `If-Range`.
    private func readRequest(_ fd: Int32) -> Request? {
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = [13, 10, 13, 10]
        while head.count < 16_384 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            head += buffer[0..<n]
            if head.count >= 4, (0...(head.count - 4)).contains(where: { Array(head[$0..<$0 + 4]) == terminator }) { break }
        }
        guard let text = String(bytes: head, encoding: .utf8) else { return nil }
        let lines = text.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count == 3, parts[0] == "GET" else { return nil }
        let target = parts[1]
        var request = Request(
            path: String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? target))
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch line[..<colon].lowercased() {
            case "range": request.range = value
            case "if-range": request.ifRange = value
            default: break
            }
        }
        return request
    }

    private func head(status: String, type: String, length: Int, cacheControl: String = "no-store",
                      location: String? = nil, extra: String = "") -> Data {
        Data(("HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(length)\r\n"
              + (location.map { "Location: \($0)\r\n" } ?? "") + extra
              + "Cache-Control: \(cacheControl)\r\nConnection: close\r\n\r\n").utf8)
    }

    /// Writes all of `data`; false when the peer went away. MSG_NOSIGNAL: a closed peer must not raise SIGPIPE.
    @discardableResult
    private func send(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                let n = Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                #else
                let n = Darwin.send(fd, base + offset, raw.count - offset, 0)
                #endif
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
    }
}

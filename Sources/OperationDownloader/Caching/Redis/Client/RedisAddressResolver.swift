import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One address a host name resolved to, ready for connect(2).
struct RedisSocketAddress: @unchecked Sendable {  // a plain value: sockaddr_storage holds no pointers
    var storage: sockaddr_storage
    var length: socklen_t
    var family: Int32
}

/// Resolves a host name within a deadline. getaddrinfo(3) cannot be given one (a resolver that does not answer
/// holds it for its own timeouts, 5 s per try), so a name is resolved on a thread of its own and the caller
/// waits for it only until the deadline; a late answer is dropped by that thread. Numeric addresses
/// (127.0.0.1, ::1) are converted at once, without a thread.
enum RedisAddressResolver {
    static func resolve(host: String, port: Int, deadline: RedisDeadline) throws(RedisConnectionFailure) -> [RedisSocketAddress] {
        if let numeric = try? lookup(host: host, port: port, numericOnly: true), !numeric.isEmpty { return numeric }
        let box = ResolutionBox()
        let thread = Thread {
            let result = Result { () throws(RedisConnectionFailure) -> [RedisSocketAddress] in
                try lookup(host: host, port: port, numericOnly: false)
            }
            box.finish(result)
        }
        thread.stackSize = 256 * 1024
        thread.start()
        guard let result = box.wait(until: deadline) else {
            throw RedisConnectionFailure(.unreachable, "cannot resolve \(host) within the connect timeout")
        }
        return try result.get()
    }

    private static func lookup(host: String, port: Int, numericOnly: Bool) throws(RedisConnectionFailure) -> [RedisSocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (numericOnly ? AI_NUMERICHOST : AI_ADDRCONFIG)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
            throw RedisConnectionFailure(.unreachable, "cannot resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(first) }
        var addresses: [RedisSocketAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        // Bounded: a resolver may return many addresses; a few are enough to try within the deadline.
        while let current = node, addresses.count < 8 {
            let entry = current.pointee
            if let address = entry.ai_addr, Int(entry.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(entry.ai_addrlen)))
                }
                addresses.append(RedisSocketAddress(storage: storage, length: entry.ai_addrlen, family: entry.ai_family))
            }
            node = entry.ai_next
        }
        return addresses
    }
}

/// The resolving thread's answer, handed to the waiting caller (or dropped when it stopped waiting).
private final class ResolutionBox: @unchecked Sendable {  // `result` guarded by `condition`
    private let condition = NSCondition()
    private var result: Result<[RedisSocketAddress], RedisConnectionFailure>?

    func finish(_ value: Result<[RedisSocketAddress], RedisConnectionFailure>) {
        condition.lock()
        result = value
        condition.broadcast()
        condition.unlock()
    }

    func wait(until deadline: RedisDeadline) -> Result<[RedisSocketAddress], RedisConnectionFailure>? {
        condition.lock()
        defer { condition.unlock() }
        while result == nil {
            let left = deadline.secondsLeft
            guard left > 0 else { break }
            _ = condition.wait(until: Date(timeIntervalSinceNow: left))
        }
        return result
    }
}

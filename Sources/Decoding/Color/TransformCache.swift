import Foundation

/// Resolved transforms by key, at most 32 (then it starts over): a process sees few distinct profiles.
final class TransformCache: @unchecked Sendable {  // `entries` is guarded by `lock`
    private var entries: [Key: ColorManagement.Resolution] = [:]
    private let lock = NSLock()

    /// A key is the SHA-256 of what it describes, not the thing itself: the cache keeps no profile alive (up to
    /// 32, some hundreds of KB each), and holds no enum payloads, whose tagged pointers LeakSanitizer cannot see
    /// inside a long-lived table (it would report them as leaks and hide real ones).
    struct Key: Hashable {
        let sha256: [UInt8]

        init(_ key: ColorManagement.TransformKey) {
            var bytes: [UInt8]
            switch key {
            case .icc(let profile, let cmyk):
                bytes = [0x49, cmyk.map { $0 ? 1 : 0 } ?? 2]
                bytes.append(contentsOf: profile)
            case .chromaticities(let xy, let gamma, let description):
                bytes = [0x43]
                for value in xy + [gamma] { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
                bytes.append(contentsOf: description.utf8)
            }
            sha256 = SHA256.digest(bytes)
        }
    }

    func resolution(for key: ColorManagement.TransformKey, make: () -> ColorManagement.Resolution) -> ColorManagement.Resolution {
        let cacheKey = Key(key)
        if let cached = lock.withLock({ entries[cacheKey] }) { return cached }
        let made = make()  // outside the lock: building a transform can take milliseconds
        lock.withLock {
            if entries.count >= 32 { entries.removeAll() }
            entries[cacheKey] = made
        }
        return made
    }
}

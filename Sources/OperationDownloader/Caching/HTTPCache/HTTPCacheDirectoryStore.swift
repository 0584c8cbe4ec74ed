import Foundation

/// The entries of an `HTTPImageCache` as files in a directory (`HTTPCacheDirectory`: one self-validating file
/// per entry, written to a temporary file and renamed into place), with least-recently-used trimming: a
/// read marks the file as used (its modification time), and when the usage this instance counts exceeds the
/// capacity it scans the directory (other processes' entries included) and trims it down to 80%.
///
/// The directory is created on the first write (again if it was removed since). A write that fails removes
/// the older file of the name, which is outdated now, and is refused with the warning the layer shows once.
/// TTLs are not kept: an entry stays until it is replaced, removed or trimmed.
final class HTTPCacheDirectoryStore: HTTPCacheByteStore, @unchecked Sendable {  // `usageEstimate`, `directoryCreated` guarded by `lock`
    /// Trimming removes entries until usage is at most this share of the capacity, so that it runs rarely.
    static let trimTargetPercent = 80

    let directory: HTTPCacheDirectory
    let capacity: Int
    private let lock = NSLock()
    /// Disk usage as last scanned plus what this instance wrote since; nil until the first write scans.
    private var usageEstimate: Int?
    private var directoryCreated = false

    init(directory: URL, capacity: Int) {
        self.directory = HTTPCacheDirectory(url: directory)
        self.capacity = max(0, capacity)
    }

    // MARK: HTTPCacheByteStore

    func get(_ name: String, maximumLength: Int, unlessVersion version: HTTPCacheValueVersion?) -> HTTPCacheByteRead {
        if let version, directory.identity(of: name).map(Self.version) == version {
            directory.touch(name)
            return .unchanged
        }
        guard case .bytes(let value, let identity) = directory.read(name, maximumSize: maximumLength) else { return .absent }
        directory.touch(name)
        return .value(value, Self.version(identity))
    }

    func set(_ name: String, _ value: Data, timeToLive: TimeInterval?) throws(HTTPCacheByteStoreError) -> HTTPCacheValueVersion {
        var identity: HTTPCacheDirectory.FileIdentity?
        var lastError: (any Error)?
        // Two attempts: the directory is created lazily, and may have been removed since (a user clearing
        // ~/.cache, another process's removeAll of the parent).
        for attempt in 0..<2 where identity == nil {
            do {
                if attempt > 0 || !lock.withLock({ directoryCreated }) {
                    try directory.create()
                    lock.withLock { directoryCreated = true }
                }
                identity = try directory.write(value, as: name)
            } catch {
                lastError = error
            }
        }
        guard let identity else {
            // The old entry, if any, is outdated now; it must not be served in place of the new response.
            directory.remove(name)
            let reason = lastError.map { "\($0)" } ?? "unknown error"
            throw .refused(warning: "HTTPImageCache: cannot write to \(directory.url.path) (\(reason)); responses are not cached while this lasts",
                           metadata: ["directory": directory.url.path, "error": reason])
        }
        let needsTrim: Bool = lock.withLock {
            guard let estimate = usageEstimate else { return true }
            let usage = estimate + HTTPCacheDirectory.diskCost(ofFileSize: value.count)
            usageEstimate = usage
            return usage > capacity
        }
        if needsTrim { trim(now: Date()) }
        return Self.version(identity)
    }

    func delete(_ names: [String]) {
        for name in names { directory.remove(name) }
    }

    func delete(_ name: String, ifVersion version: HTTPCacheValueVersion) {
        guard directory.identity(of: name).map(Self.version) == version else { return }
        directory.remove(name)
    }

    func deleteAll() {
        lock.withLock { usageEstimate = 0 }
        directory.removeAllEntries()
    }

    // MARK: Usage

    /// Disk space used by the entries (rounded up to 4 KiB blocks), from a directory scan.
    func usage() -> Int {
        let usage = directory.scan().reduce(0) { $0 + $1.diskCost }
        lock.withLock { usageEstimate = usage }
        return usage
    }

    /// Scans the directory and, when usage exceeds the capacity, removes least recently modified entries
    /// until usage is at most 80% of it (other processes' entries count and may be removed too). Runs rarely:
    /// after trimming, a fifth of the capacity must be written before the next one.
    func trim(now: Date) {
        let files = directory.scan(now: now)
        var usage = files.reduce(0) { $0 + $1.diskCost }
        if usage > capacity {
            let target = capacity / 100 * Self.trimTargetPercent
            for file in files.sorted(by: { $0.modified < $1.modified }) where usage > target {
                directory.remove(file.name)
                usage -= file.diskCost
            }
        }
        lock.withLock { usageEstimate = usage }
    }

    private static func version(_ identity: HTTPCacheDirectory.FileIdentity) -> HTTPCacheValueVersion {
        HTTPCacheValueVersion(identity.device, identity.inode, UInt64(truncatingIfNeeded: identity.size))
    }
}

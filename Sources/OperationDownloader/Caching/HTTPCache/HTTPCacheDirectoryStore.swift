import Foundation

/// The entries of an `HTTPImageCache` as files in a directory (`HTTPCacheDirectory`: one self-validating file
/// per entry, written to a temporary file and renamed into place), kept within `capacity` by least-recently-used
/// trimming: a read marks the file as used (its modification time), and a write that would take the directory
/// over its capacity first removes the least recently used entries (other processes' too) down to 80%.
///
/// The usage count is shared by every process using the directory (`HTTPCacheUsageLedger`, a locked file), and a
/// write's room is made and its file renamed into place under that lock: many processes writing at once keep the
/// directory within its capacity. The directory is created on the first write (again if it was removed since).
/// A write that fails removes the older file of the name, which is outdated now, and is refused with the warning
/// the layer shows once. TTLs are not kept: an entry stays until it is replaced, removed or trimmed.
final class HTTPCacheDirectoryStore: HTTPCacheByteStore, @unchecked Sendable {  // `directoryCreated` guarded by `lock`
    /// Trimming removes entries until usage is at most this share of the capacity, so that it runs rarely.
    static let trimTargetPercent = 80

    let directory: HTTPCacheDirectory
    let capacity: Int
    private let ledger: HTTPCacheUsageLedger
    private let lock = NSLock()
    private var directoryCreated = false

    init(directory: URL, capacity: Int) {
        self.directory = HTTPCacheDirectory(url: directory)
        self.capacity = max(0, capacity)
        self.ledger = HTTPCacheUsageLedger(directory: directory)
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
                let (temporary, written) = try directory.writeTemporary(value)
                try place(temporary, as: name, cost: HTTPCacheDirectory.diskCost(ofFileSize: value.count))
                identity = written
            } catch {
                lastError = error
            }
        }
        guard let identity else {
            // The old entry, if any, is outdated now; it must not be served in place of the new response.
            delete([name])
            let reason = lastError.map { "\($0)" } ?? "unknown error"
            throw .refused(warning: "HTTPImageCache: cannot write to \(directory.url.path) (\(reason)); responses are not cached while this lasts",
                           metadata: ["directory": directory.url.path, "error": reason])
        }
        return Self.version(identity)
    }

    /// Renames `temporary` into place as `name` under the shared usage count, first trimming the directory when
    /// the new file would take it over its capacity. A file it replaces stays counted until the next scan (the
    /// count errs high only: one `stat` less per write).
    private func place(_ temporary: String, as name: String, cost: Int) throws {
        try ledger.withUsage { usage in
            var current = usage ?? trimmed(now: Date(), over: Int.max, to: 0)
            if current + cost > capacity {
                // The scan says whether the room is really missing.
                current = trimmed(now: Date(), over: capacity - cost, to: capacity / 100 * Self.trimTargetPercent - cost)
            }
            do {
                try directory.commit(temporary, as: name)
            } catch {
                usage = current
                throw error
            }
            usage = current + cost
        }
    }

    func delete(_ names: [String]) {
        guard !names.isEmpty else { return }
        ledger.withUsage { usage in
            for name in names {
                guard let identity = directory.identity(of: name) else { continue }
                directory.remove(name)
                usage = usage.map { max(0, $0 - HTTPCacheDirectory.diskCost(ofFileSize: identity.size)) }
            }
        }
    }

    func delete(_ name: String, ifVersion version: HTTPCacheValueVersion) {
        ledger.withUsage { usage in
            guard let identity = directory.identity(of: name), Self.version(identity) == version else { return }
            directory.remove(name)
            usage = usage.map { max(0, $0 - HTTPCacheDirectory.diskCost(ofFileSize: identity.size)) }
        }
    }

    func deleteAll() {
        ledger.withUsage { usage in
            directory.removeAllEntries()
            usage = 0
        }
    }

    // MARK: Usage

    /// Disk space used by the entries (rounded up to 4 KiB blocks), from a directory scan.
    func usage() -> Int {
        ledger.withUsage { usage in
            let scanned = trimmed(now: Date(), over: Int.max, to: 0)
            usage = scanned
            return scanned
        }
    }

    /// Scans the directory and, when usage exceeds the capacity, removes least recently modified entries
    /// until usage is at most 80% of it (other processes' entries count and may be removed too).
    func trim(now: Date) {
        ledger.withUsage { usage in
            usage = trimmed(now: now, over: capacity, to: capacity / 100 * Self.trimTargetPercent)
        }
    }

    /// Scans the directory: when its usage exceeds `limit`, removes least recently modified entries until it is
    /// at most `target`. Returns the usage left.
    private func trimmed(now: Date, over limit: Int, to target: Int) -> Int {
        let files = directory.scan(now: now)
        var usage = files.reduce(0) { $0 + $1.diskCost }
        guard usage > limit else { return usage }
        for file in files.sorted(by: { $0.modified < $1.modified }) where usage > target {
            directory.remove(file.name)
            usage -= file.diskCost
        }
        return usage
    }

    private static func version(_ identity: HTTPCacheDirectory.FileIdentity) -> HTTPCacheValueVersion {
        HTTPCacheValueVersion(identity.device, identity.inode, UInt64(truncatingIfNeeded: identity.size))
    }
}

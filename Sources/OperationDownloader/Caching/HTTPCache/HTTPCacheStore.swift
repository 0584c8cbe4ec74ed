import Foundation

/// The files of an `HTTPImageCache` and the memory layer in front of them: reads (memory first, validated
/// files otherwise), writes and removals on the cache's own serial I/O queue, least-recently-used trimming,
/// and the one warning when the directory cannot be written.
///
/// Every change to the directory goes through `ioQueue`, in order: a write the caller does not wait for
/// (a 304 refresh arrives on the session's delegate queue, which must not block on the disk) can never
/// land after a later store or removal of the same file. Its content is in memory at once, so reads see it
/// before the file does.
final class HTTPCacheStore: @unchecked Sendable {  // mutable state guarded by `lock`
    /// Trimming removes entries until usage is at most this share of the capacity, so that it runs rarely.
    static let trimTargetPercent = 80

    let directory: HTTPCacheDirectory
    let diskCapacity: Int
    /// Files larger than this are not read (a cache with a larger capacity may share the directory).
    let maximumFileSize: Int
    private let ioQueue = DispatchQueue(label: "OperationDownloader.HTTPImageCache.io")
    private let lock = NSLock()
    private var memory: HTTPCacheMemoryLayer<HTTPCacheDirectory.FileIdentity>
    /// Disk usage as last scanned plus what this instance wrote since; nil until the first write scans.
    private var diskUsageEstimate: Int?
    private var directoryCreated = false
    private var hasWarned = false
    /// The warning handler, log hook and metrics sink (`od_http_cache_write_failures_total`).
    let telemetry = CacheTelemetry(storage: "directory")
    private var _beforeDiskWrite: (@Sendable (String) -> Void)?

    init(directory: URL, diskCapacity: Int, memoryCapacity: Int, maximumFileSize: Int) {
        self.directory = HTTPCacheDirectory(url: directory)
        self.diskCapacity = diskCapacity
        self.maximumFileSize = maximumFileSize
        self.memory = HTTPCacheMemoryLayer(capacity: memoryCapacity)
    }

    var warningHandler: (@Sendable (String) -> Void)? {
        get { telemetry.warningHandler }
        set { telemetry.warningHandler = newValue }
    }

    /// Tests: runs on the I/O queue before each file write, with the entry's file name (a slow disk).
    var beforeDiskWrite: (@Sendable (String) -> Void)? {
        get { lock.withLock { _beforeDiskWrite } }
        set { lock.withLock { _beforeDiskWrite = newValue } }
    }

    var memoryUsage: Int { lock.withLock { memory.usage } }

    // MARK: Reading

    /// The content of file `name` for `key` from memory (if its file is unchanged, or its write is queued)
    /// or disk; marks it as recently used. A valid file holding another key is removed.
    func read(_ name: String, key: String, url: URL) -> HTTPCacheContent? {
        let remembered = lock.withLock { memory.item(forFileName: name) }
        if let remembered {
            if case .removed = remembered.content { return nil }
            guard let identity = remembered.identity else { return remembered.content }
            if directory.identity(of: name) == identity {
                directory.touch(name)
                return remembered.content
            }
            lock.withLock { memory.remove(fileName: name) }
        }
        guard case .entry(let entry, let identity) = directory.read(name, maximumSize: maximumFileSize) else { return nil }
        guard entry.key == key, let content = Self.content(of: entry, url: url, fileName: name) else {
            // A valid file under the wrong name was not written by this cache for this key.
            directory.removeIfUnchanged(name, identity: identity)
            return nil
        }
        directory.touch(name)
        lock.withLock { _ = memory.insert(content, fileName: name, identity: identity) }
        return content
    }

    static func content(of entry: HTTPCacheEntryFile, url: URL, fileName: String) -> HTTPCacheContent? {
        switch entry.kind {
        case .variantIndex:
            let fields = HTTPVary(entry.headers["Vary"]).fieldNames
            guard !fields.isEmpty else { return nil }
            return .variantIndex(fields: fields, generation: String(decoding: entry.body, as: UTF8.self))
        case .response, .headersOnly:
            return CachedHTTPResponse(entry: entry, url: url, fileName: fileName).map { .response($0) }
        }
    }

    // MARK: Writing

    /// Writes `entry` as file `name`. With `wait`, returns after the file is written (or the write failed);
    /// without, returns at once: the content is served from memory until the queued write lands.
    func write(_ entry: HTTPCacheEntryFile, as name: String, url: URL, wait: Bool) {
        guard let content = Self.content(of: entry, url: url, fileName: name) else { return }
        let serial = lock.withLock { memory.insert(content, fileName: name, identity: nil) }
        let work: @Sendable () -> Void = { [self] in writeOnQueue(entry, name: name, serial: serial) }
        if wait { ioQueue.sync(execute: work) } else { ioQueue.async(execute: work) }
    }

    /// Removes files (and their memory items); on disk in order with queued writes. Without `wait` the files
    /// read as absent at once (a memory tombstone) until their queued removal lands.
    func remove(_ names: [String], wait: Bool) {
        guard !names.isEmpty else { return }
        let serials: [(String, UInt64)] = lock.withLock {
            names.map { ($0, memory.insert(.removed, fileName: $0, identity: nil)) }
        }
        let work: @Sendable () -> Void = { [self] in
            for name in names { directory.remove(name) }
            lock.withLock { for (name, serial) in serials { memory.written(name, serial: serial, identity: nil) } }
        }
        if wait { ioQueue.sync(execute: work) } else { ioQueue.async(execute: work) }
    }

    func removeAll() {
        lock.withLock {
            memory.removeAll()
            diskUsageEstimate = 0
        }
        ioQueue.sync { directory.removeAllEntries() }
    }

    /// Returns once every queued write and removal has reached the directory.
    func waitForQueuedWork() {
        ioQueue.sync {}
    }

    /// Disk space used by the entries (rounded up to 4 KiB blocks), from a directory scan.
    var diskUsage: Int {
        let usage = ioQueue.sync { directory.scan().reduce(0) { $0 + $1.diskCost } }
        lock.withLock { diskUsageEstimate = usage }
        return usage
    }

    /// Scans the directory and, when usage exceeds the capacity, removes least recently modified entries
    /// until usage is at most 80% of it (other processes' entries count and may be removed too).
    func trim(now: Date = Date()) {
        ioQueue.sync { trimOnQueue(now: now) }
    }

    private func writeOnQueue(_ entry: HTTPCacheEntryFile, name: String, serial: UInt64) {
        lock.withLock { _beforeDiskWrite }?(name)
        let encoded = entry.encoded()
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
                identity = try directory.write(encoded, as: name)
            } catch {
                lastError = error
            }
        }
        lock.withLock { memory.written(name, serial: serial, identity: identity) }
        guard identity != nil else {
            // The old entry, if any, is outdated now; it must not be served in place of the new response.
            directory.remove(name)
            let reason = lastError.map { "\($0)" } ?? "unknown error"
            telemetry.writeFailed()
            warnOnce("HTTPImageCache: cannot write to \(directory.url.path) (\(reason)); responses are not cached while this lasts",
                     reason: reason)
            return
        }
        let needsTrim: Bool = lock.withLock {
            guard let estimate = diskUsageEstimate else { return true }
            let usage = estimate + HTTPCacheDirectory.diskCost(ofFileSize: encoded.count)
            diskUsageEstimate = usage
            return usage > diskCapacity
        }
        if needsTrim { trimOnQueue(now: Date()) }
    }

    /// Runs rarely: after trimming, a fifth of the capacity must be written before the next one.
    private func trimOnQueue(now: Date) {
        let files = directory.scan(now: now)
        var usage = files.reduce(0) { $0 + $1.diskCost }
        var removed = Set<String>()
        if usage > diskCapacity {
            let target = diskCapacity / 100 * Self.trimTargetPercent
            for file in files.sorted(by: { $0.modified < $1.modified }) where usage > target {
                directory.remove(file.name)
                usage -= file.diskCost
                removed.insert(file.name)
            }
        }
        lock.withLock {
            diskUsageEstimate = usage
            if !removed.isEmpty { memory.remove(fileNames: removed) }
        }
    }

    private func warnOnce(_ message: String, reason: String) {
        let first: Bool = lock.withLock {
            defer { hasWarned = true }
            return !hasWarned
        }
        guard first else { return }
        telemetry.logger.log(.warning, message, metadata: ["directory": directory.url.path, "error": reason])
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The package's HTTP cache for downloaded images: a directory of entry files (body, status, header
/// fields, dates) with a small memory layer in front, used by `ImageDownloader` for requests with
/// `.useURLCache`.
///
/// It replaces `URLCache`, which on Linux never stores responses, never sends validators and serves
/// stored entries even for reload-ignoring policies. Freshness follows RFC 9111 for a private cache:
/// Cache-Control `no-store`, `no-cache`, `max-age`, `must-revalidate`, Expires, Date/Age, and a Last-Modified
/// heuristic (10% of the age, at most a day); stale entries are revalidated with If-None-Match /
/// If-Modified-Since. Responses whose `Vary` names anything but Accept and Accept-Encoding are not stored.
///
/// Several caches (in one or several processes) may share a directory: entries are written to a temporary
/// file and renamed into place, readers validate each file's checksums, and least-recently-used trimming
/// works from file modification times, so no shared index can go stale. Corrupt, truncated or foreign entry
/// files are discarded and never served. When the directory cannot be written (full disk, not a directory),
/// the cache logs one warning and carries on without storing.
public final class HTTPImageCache: @unchecked Sendable {  // mutable state guarded by `lock`
    /// The default directory of `shared`: `$XDG_CACHE_HOME/OperationDownloader/http`, else
    /// `~/.cache/OperationDownloader/http` (the platform caches directory on Apple platforms).
    public static func defaultDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            #if canImport(Darwin)
            base = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            #else
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".cache", isDirectory: true)
            #endif
        }
        return base.appendingPathComponent("OperationDownloader", isDirectory: true)
            .appendingPathComponent("http", isDirectory: true)
    }

    /// A cache in `defaultDirectory()` with the default capacities. Nothing touches the disk until first use.
    public static let shared = HTTPImageCache(directory: defaultDirectory())

    /// The directory holding the entry files.
    public let directory: URL
    /// Disk usage (in 4 KiB blocks) above which least recently used entries are removed, down to 80%.
    public let diskCapacity: Int
    /// Bytes of response bodies kept in memory.
    public let memoryCapacity: Int

    /// Receives the one warning logged when the directory cannot be written; nil writes it to standard error.
    public var warningHandler: (@Sendable (String) -> Void)? {
        get { lock.withLock { _warningHandler } }
        set { lock.withLock { _warningHandler = newValue } }
    }

    /// A response body larger than this share of the disk capacity is not stored (it would evict most of the
    /// cache), as NSURLCache does.
    static let maximumEntryFraction = 10
    /// Trimming removes entries until usage is at most this share of the capacity, so that it runs rarely.
    static let trimTargetPercent = 80

    private let store: HTTPCacheDirectory
    private let lock = NSLock()
    private var memory: HTTPCacheMemoryLayer
    /// Disk usage as last scanned plus what this instance wrote since; nil until the first write scans.
    private var diskUsageEstimate: Int?
    private var directoryCreated = false
    private var hasWarned = false
    private var _warningHandler: (@Sendable (String) -> Void)?

    /// Creates a cache in `directory` (created on first write).
    /// - Parameters:
    ///   - diskCapacity: bytes on disk before least recently used entries are removed (default 150 MB).
    ///   - memoryCapacity: bytes of bodies kept in memory (default 20 MB; 0 disables the memory layer).
    public init(directory: URL, diskCapacity: Int = 150 * 1024 * 1024, memoryCapacity: Int = 20 * 1024 * 1024) {
        self.directory = directory.standardizedFileURL
        self.diskCapacity = max(0, diskCapacity)
        self.memoryCapacity = max(0, memoryCapacity)
        self.store = HTTPCacheDirectory(url: self.directory)
        self.memory = HTTPCacheMemoryLayer(capacity: self.memoryCapacity)
    }

    // MARK: Public API

    /// The stored response for `request` (GET, same key, matching `Vary`), fresh or stale, or nil.
    /// Like `URLCache.cachedResponse(for:)`: no freshness check; reading marks the entry as recently used.
    public func cachedResponse(for request: URLRequest) -> CachedHTTPResponse? {
        storedResponse(for: request)
    }

    /// Removes the stored response for `request`'s URL, if any.
    public func removeCachedResponse(for request: URLRequest) {
        guard let url = request.url, let key = HTTPCacheKey.key(for: url) else { return }
        lock.withLock { memory.remove(key: key) }
        store.remove(HTTPCacheKey.fileName(for: key))
    }

    /// Removes every stored response from memory and disk (files of other names in the directory are left alone).
    public func removeAll() {
        lock.withLock {
            memory.removeAll()
            diskUsageEstimate = 0
        }
        store.removeAllEntries()
    }

    /// Disk space used by the entries (rounded up to 4 KiB blocks), from a directory scan.
    public var currentDiskUsage: Int {
        let usage = store.scan().reduce(0) { $0 + $1.diskCost }
        lock.withLock { diskUsageEstimate = usage }
        return usage
    }

    /// Bytes of bodies held in the memory layer.
    public var currentMemoryUsage: Int {
        lock.withLock { memory.usage }
    }

    // MARK: Internal API for the download operation

    /// Combines `.useURLCache`, `request.cachePolicy` and the stored response into what to do
    /// (see `HTTPCacheRequestPolicy`): serve from the cache, load (conditionally), or fail.
    func plan(for request: URLRequest, useURLCache: Bool, now: Date = Date()) -> HTTPCachePlan {
        // "Never load" when the cache may not be read can only fail, as on Apple without a URLCache.
        if !useURLCache, request.cachePolicy == .returnCacheDataDontLoad { return .unavailable }
        let policy = HTTPCacheRequestPolicy.resolve(cachePolicy: request.cachePolicy, useURLCache: useURLCache)
        switch policy.readMode {
        case .none:
            return .load(request, revalidating: nil, storesResponse: policy.storesResponses)
        case .anyStoredElseLoad:
            if let stored = storedResponse(for: request) { return .serveFromCache(stored) }
            return .load(request, revalidating: nil, storesResponse: policy.storesResponses)
        case .anyStoredDontLoad:
            if let stored = storedResponse(for: request) { return .serveFromCache(stored) }
            return .unavailable
        case .alwaysRevalidate:
            guard let stored = storedResponse(for: request) else {
                return .load(request, revalidating: nil, storesResponse: policy.storesResponses)
            }
            return conditionalLoad(request, stored: stored, validators: stored.validators, policy: policy)
        case .protocolRules:
            switch lookup(for: request, now: now) {
            case .fresh(let stored):
                return .serveFromCache(stored)
            case .stale(let stored, let validators):
                return conditionalLoad(request, stored: stored, validators: validators, policy: policy)
            case .miss:
                return .load(request, revalidating: nil, storesResponse: policy.storesResponses)
            }
        }
    }

    /// `request` with the validators added (fields the caller already set are kept), revalidating `stored`.
    private func conditionalLoad(_ request: URLRequest, stored: CachedHTTPResponse, validators: [String: String],
                                 policy: HTTPCacheRequestPolicy) -> HTTPCachePlan {
        var conditional = request
        for (name, value) in validators.sorted(by: { $0.key < $1.key })
        where request.value(forHTTPHeaderField: name) == nil {
            conditional.setValue(value, forHTTPHeaderField: name)
        }
        return .load(conditional, revalidating: stored, storesResponse: policy.storesResponses)
    }

    /// RFC 9111 lookup: fresh, stale (with the validators to send), or miss.
    func lookup(for request: URLRequest, now: Date = Date()) -> HTTPCacheLookup {
        guard let stored = storedResponse(for: request) else { return .miss }
        let requestHeaders = HTTPHeaderFields(request: request)
        if HTTPFreshness.isFresh(stored.headers, requestDate: stored.requestDate, responseDate: stored.storedDate,
                                 request: requestHeaders, now: now) {
            return .fresh(stored)
        }
        return .stale(stored, validators: HTTPFreshness.validators(stored.headers))
    }

    /// Stores `response` and its body for `request` when RFC 9111 allows it; when it does not (no-store,
    /// an unsupported Vary, another status), any older entry for the URL is removed, since it is outdated.
    /// - Parameters:
    ///   - requestDate: when the request was sent; `responseDate`: when the response arrived (for the age).
    func store(_ response: HTTPURLResponse, data: Data, for request: URLRequest, requestDate: Date, responseDate: Date) {
        guard let url = request.url, let key = HTTPCacheKey.key(for: url) else { return }
        let requestHeaders = HTTPHeaderFields(request: request)
        let responseHeaders = HTTPHeaderFields(response)
        let storability = HTTPFreshness.storability(method: request.httpMethod ?? "GET", statusCode: response.statusCode,
                                                    responseHeaders: responseHeaders, requestHeaders: requestHeaders)
        guard case .storable(let varyFields) = storability, data.count <= maximumBodySize else {
            removeCachedResponse(for: request)
            return
        }
        let entry = HTTPCacheEntryFile(
            key: key, statusCode: response.statusCode,
            headers: HTTPCacheHeaderRules.fieldsForStorage(responseHeaders, bodyLength: data.count),
            varyValues: HTTPFreshness.varyValues(varyFields, request: requestHeaders),
            requestDate: min(requestDate, responseDate), responseDate: responseDate, body: data)
        write(entry, url: url)
    }

    /// Applies a 304 to the stored response (`stored`, else what the cache holds for `request`): its header
    /// fields update the stored ones, the dates become those of the revalidation, the entry is rewritten,
    /// and the updated response is returned for serving. Nil when nothing is stored or the 304's ETag names
    /// a different representation (the operation then reports `ImageDownloaderError.notModified`).
    func refreshed(with notModified: HTTPURLResponse, for request: URLRequest, stored: CachedHTTPResponse? = nil,
                   requestDate: Date, responseDate: Date) -> CachedHTTPResponse? {
        guard let url = request.url, let stored = stored ?? storedResponse(for: request) else { return nil }
        let update = HTTPHeaderFields(notModified)
        guard HTTPFreshness.notModifiedMatches(stored: stored.headers, notModified: update) else { return nil }
        let headers = HTTPFreshness.updatedHeaders(stored: stored.headers, notModified: update)
        let entry = HTTPCacheEntryFile(key: stored.key, statusCode: stored.statusCode, headers: headers,
                                       varyValues: stored.varyValues, requestDate: min(requestDate, responseDate),
                                       responseDate: responseDate, body: stored.data)
        guard let refreshed = CachedHTTPResponse(entry: entry, url: url) else { return nil }
        if CacheControlDirectives(headers["Cache-Control"]).noStore {
            removeCachedResponse(for: request)
        } else {
            write(entry, url: url)
        }
        return refreshed
    }

    // MARK: Reading

    private var maximumBodySize: Int { diskCapacity / Self.maximumEntryFraction }

    private func storedResponse(for request: URLRequest) -> CachedHTTPResponse? {
        guard let url = request.url, let key = HTTPCacheKey.key(for: url),
              (request.httpMethod ?? "GET").uppercased() == "GET" else { return nil }
        guard let stored = response(forKey: key, url: url) else { return nil }
        let fields = HTTPFreshness.varyFields(stored.headers) ?? []
        let requestHeaders = HTTPHeaderFields(request: request)
        guard HTTPFreshness.varyMatches(storedValues: stored.varyValues, fields: fields, request: requestHeaders) else {
            return nil
        }
        return stored
    }

    /// The entry for `key` from memory (if its file is unchanged) or disk; marks it as recently used.
    private func response(forKey key: String, url: URL) -> CachedHTTPResponse? {
        let name = HTTPCacheKey.fileName(for: key)
        let remembered = lock.withLock { memory.item(forKey: key) }
        if let remembered {
            if store.identity(of: name) == remembered.identity {
                store.touch(name)
                return remembered.response
            }
            lock.withLock { memory.remove(key: key) }
        }
        let maximumFileSize = maximumBodySize + HTTPCacheEntryFile.headerSize + HTTPCacheEntryFile.maximumMetadataLength
        guard case .entry(let entry, let identity) = store.read(name, maximumSize: maximumFileSize) else { return nil }
        guard entry.key == key, let response = CachedHTTPResponse(entry: entry, url: url) else {
            // A valid file under the wrong name was not written by this cache for this key.
            store.removeIfUnchanged(name, identity: identity)
            return nil
        }
        store.touch(name)
        lock.withLock { memory.insert(response, fileName: name, identity: identity) }
        return response
    }

    // MARK: Writing and trimming

    private func write(_ entry: HTTPCacheEntryFile, url: URL) {
        let name = HTTPCacheKey.fileName(for: entry.key)
        let encoded = entry.encoded()
        var identity: HTTPCacheDirectory.FileIdentity?
        var lastError: (any Error)?
        // Two attempts: the directory is created lazily, and may have been removed since (a user clearing
        // ~/.cache, another process's removeAll of the parent).
        for attempt in 0..<2 where identity == nil {
            do {
                if attempt > 0 || !lock.withLock({ directoryCreated }) {
                    try store.create()
                    lock.withLock { directoryCreated = true }
                }
                identity = try store.write(encoded, as: name)
            } catch {
                lastError = error
            }
        }
        guard let identity else {
            // The old entry, if any, is outdated now; it must not be served in place of the new response.
            removeCachedResponse(for: URLRequest(url: url))
            let reason = lastError.map { "\($0)" } ?? "unknown error"
            warnOnce("HTTPImageCache: cannot write to \(directory.path) (\(reason)); responses are not cached while this lasts")
            return
        }
        guard let response = CachedHTTPResponse(entry: entry, url: url) else { return }
        let needsTrim: Bool = lock.withLock {
            memory.insert(response, fileName: name, identity: identity)
            guard let estimate = diskUsageEstimate else { return true }
            let usage = estimate + HTTPCacheDirectory.diskCost(ofFileSize: encoded.count)
            diskUsageEstimate = usage
            return usage > diskCapacity
        }
        if needsTrim { trim() }
    }

    /// Scans the directory and, when usage exceeds the capacity, removes least recently modified entries
    /// until usage is at most 80% of it. Runs in the caller (rarely: after trimming, a fifth of the capacity
    /// must be written before the next one). Other processes' entries count and may be removed too.
    func trim(now: Date = Date()) {
        let files = store.scan(now: now)
        var usage = files.reduce(0) { $0 + $1.diskCost }
        var removed = Set<String>()
        if usage > diskCapacity {
            let target = diskCapacity / 100 * Self.trimTargetPercent
            for file in files.sorted(by: { $0.modified < $1.modified }) where usage > target {
                store.remove(file.name)
                usage -= file.diskCost
                removed.insert(file.name)
            }
        }
        lock.withLock {
            diskUsageEstimate = usage
            if !removed.isEmpty { memory.remove(fileNames: removed) }
        }
    }

    private func warnOnce(_ message: String) {
        let handler: (@Sendable (String) -> Void)?? = lock.withLock {
            if hasWarned { return .none }
            hasWarned = true
            return .some(_warningHandler)
        }
        guard case .some(let custom) = handler else { return }
        if let custom {
            custom(message)
        } else {
            FileHandle.standardError.write(Data((message + "\n").utf8))
        }
    }
}

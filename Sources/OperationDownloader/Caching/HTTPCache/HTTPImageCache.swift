import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The package's HTTP cache for downloaded images: a directory of entry files (body, status, header
/// fields, dates) with a small memory layer in front, used by `ImageDownloader` for requests with
/// `.useURLCache`.
///
/// It replaces `URLCache`, which on Linux never stores responses, never sends validators and serves
/// stored entries even for reload-ignoring policies. It follows RFC 9111 for a private cache (see
/// Docs/HTTPCache.md for every directive and status): Cache-Control (including `stale-while-revalidate`,
/// `stale-if-error`, `immutable` and the request directives), Expires, Date/Age, a Last-Modified heuristic
/// (10% of the age, at most a day), `Vary` with several variants per URL, revalidation with
/// If-None-Match / If-Modified-Since, and the statuses RFC 9110 makes cacheable by default.
///
/// Several caches (in one or several processes) may share a directory: entries are written to a temporary
/// file and renamed into place, readers validate each file's checksums, and least-recently-used trimming
/// works from file modification times, so no shared index can go stale. Corrupt, truncated or foreign entry
/// files are discarded and never served. When the directory cannot be written (full disk, not a directory),
/// the cache logs one warning and carries on without storing.
public final class HTTPImageCache: @unchecked Sendable {  // `revalidating`, `revalidationEnded` guarded by `lock`
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

    /// The directory holding the entry files; nil for a cache on Redis alone (`init(redis:)`); for a tiered
    /// cache (`init(tiers:)`), its directory tier's.
    public let directory: URL?
    /// Disk usage (in 4 KiB blocks) above which least recently used entries are removed, down to 80%
    /// (0 for a cache on Redis, whose server evicts by itself).
    public let diskCapacity: Int
    /// Bytes of response bodies kept in memory.
    public let memoryCapacity: Int

    /// Receives the cache's warnings (the directory cannot be written; Redis unavailable or refusing writes);
    /// nil writes them to standard error.
    public var warningHandler: (@Sendable (String) -> Void)? {
        get { layer.telemetry.warningHandler }
        set {
            layer.telemetry.warningHandler = newValue
            // A tiered cache's Redis connections warn through their own cache.
            for tier in tierCaches { tier.warningHandler = newValue }
        }
    }

    /// A response body larger than this share of the disk capacity is not stored (it would evict most of the
    /// cache), as NSURLCache does.
    static let maximumEntryFraction = 10
    /// Trimming removes entries until usage is at most this share of the capacity, so that it runs rarely.
    static let trimTargetPercent = HTTPCacheDirectoryStore.trimTargetPercent

    /// The memory layer, write-behind queue and shared-fetch coordination over the storage tiers.
    let layer: HTTPCacheLayer
    /// The directory tier's files (usage, trimming), if the cache has one.
    let disk: HTTPCacheDirectoryStore?
    /// The caches a tiered cache (`init(tiers:)`) was made of, nearest first; empty otherwise.
    let tierCaches: [HTTPImageCache]
    private let lock = NSLock()
    /// Entry files with a background revalidation in flight (stale-while-revalidate): one at a time each.
    private var revalidating: Set<String> = []
    private var revalidationEnded: (@Sendable (String) -> Void)?

    /// Creates a cache in `directory` (created on first write).
    /// - Parameters:
    ///   - diskCapacity: bytes on disk before least recently used entries are removed (default 150 MB).
    ///   - memoryCapacity: bytes of bodies kept in memory (default 20 MB; 0 disables the memory layer).
    public convenience init(directory: URL, diskCapacity: Int = 150 * 1024 * 1024, memoryCapacity: Int = 20 * 1024 * 1024) {
        let directory = directory.standardizedFileURL
        let diskCapacity = max(0, diskCapacity)
        let disk = HTTPCacheDirectoryStore(directory: directory, capacity: diskCapacity)
        let tier = Self.directoryTier(disk)
        let layer = HTTPCacheLayer(tiers: [tier], memoryCapacity: max(0, memoryCapacity), isShared: false, telemetry: CacheTelemetry())
        self.init(layer: layer, directory: directory, disk: disk, diskCapacity: diskCapacity, memoryCapacity: memoryCapacity)
    }

    /// The tier of a directory store: bodies up to a tenth of its capacity, no TTLs.
    static func directoryTier(_ disk: HTTPCacheDirectoryStore, bytes: (any HTTPCacheByteStore)? = nil) -> HTTPCacheTier {
        HTTPCacheTier(storage: "directory", bytes: bytes ?? disk, maximumBodySize: disk.capacity / maximumEntryFraction, lifetime: nil)
    }

    /// A cache on `layer`; `directory`, `diskCapacity` and `memoryCapacity` as the public properties report them.
    init(layer: HTTPCacheLayer, directory: URL?, disk: HTTPCacheDirectoryStore?, diskCapacity: Int, memoryCapacity: Int,
         tierCaches: [HTTPImageCache] = []) {
        self.tierCaches = tierCaches
        self.directory = directory
        self.diskCapacity = max(0, diskCapacity)
        self.memoryCapacity = max(0, memoryCapacity)
        self.layer = layer
        self.disk = disk
    }

    // MARK: Public API

    /// The stored response for `request` (GET, same key, matching `Vary`), fresh or stale, or nil.
    /// Like `URLCache.cachedResponse(for:)`: no freshness check; reading marks the entry as recently used.
    public func cachedResponse(for request: URLRequest) -> CachedHTTPResponse? {
        storedResponse(for: request)
    }

    /// Removes the stored response for `request`'s URL (every variant), if any.
    public func removeCachedResponse(for request: URLRequest) {
        layer.remove(fileNames(for: request), wait: true)
    }

    /// Removes every stored response from memory and disk (files of other names in the directory are left alone).
    public func removeAll() {
        layer.removeAll()
    }

    /// Disk space used by the entries (rounded up to 4 KiB blocks), from a directory scan.
    public var currentDiskUsage: Int {
        guard let disk else { return 0 }
        layer.waitForQueuedWork()
        return disk.usage()
    }

    /// Bytes of bodies held in the memory layer.
    public var currentMemoryUsage: Int { layer.memoryUsage }

    // MARK: Reading (internal API for the download)

    /// Combines `.useURLCache`, `request.cachePolicy`, the request's own Cache-Control and the stored response
    /// into what to do (see `HTTPCachePlan`).
    func plan(for request: URLRequest, useURLCache: Bool, now: Date = Date()) -> HTTPCachePlan {
        HTTPCachePlanner(cache: self, request: request, useURLCache: useURLCache, now: now).plan()
    }

    /// RFC 9111 lookup: fresh, usable although stale, stale (with the validators to send), or miss. The one place
    /// where a lookup's outcome and the storage that answered ("memory", "directory", "redis") are both known.
    func lookup(for request: URLRequest, now: Date = Date()) -> HTTPCacheLookup {
        guard let (stored, _) = locate(request, now: now) else { return .miss }
        switch stored.use(for: HTTPHeaderFields(request: request), now: now) {
        case .fresh: return .fresh(stored)
        case .staleAcceptedByRequest: return .staleAccepted(stored)
        case .staleWhileRevalidate: return .staleWhileRevalidate(stored, validators: stored.validators)
        case .validate: return .stale(stored, validators: stored.validators)
        }
    }

    /// The stored response that `request` selects: the URL's entry, or through its variant index the variant
    /// whose varied request fields match `request`'s. With `freshAt` and several tiers, one fresh at that time
    /// further down wins over a stale one nearer (another process's store or revalidation), as in `lookup`.
    func storedResponse(for request: URLRequest, freshAt now: Date? = nil) -> CachedHTTPResponse? {
        locate(request, now: now)?.response
    }

    /// The stored response `request` selects and the storage it came from. With several tiers and `now`, a
    /// response fresh at `now` further down wins over a stale one nearer (freshness is the stored response's,
    /// wherever it sits).
    private func locate(_ request: URLRequest, now: Date?) -> (response: CachedHTTPResponse, storage: String)? {
        guard let url = request.url, let key = HTTPCacheKey.key(for: url),
              (request.httpMethod ?? "GET").uppercased() == "GET" else { return nil }
        let requestHeaders = HTTPHeaderFields(request: request)
        var preferring: ((HTTPCacheContent) -> Bool)?
        if let now, layer.tiers.count > 1 {
            preferring = { content in
                guard case .response(let response) = content else { return true }
                return response.use(for: requestHeaders, now: now) == .fresh
            }
        }
        let primary = HTTPCacheKey.fileName(for: key)
        let found: HTTPCacheLayer.Read
        switch layer.read(primary, key: key, url: url, preferring: preferring) {
        case let read? where read.isResponse:
            found = read
        case .some(let read):
            guard case .variantIndex(let fields, let generation) = read.content else { return nil }
            let name = HTTPCacheKey.variantFileName(for: key, generation: generation,
                                                    values: Self.varyValues(fields, request: requestHeaders), fields: fields)
            guard let variant = layer.read(name, key: key, url: url, preferring: preferring), variant.isResponse else { return nil }
            found = variant
        case nil:
            return nil
        }
        guard case .response(let response) = found.content, Self.varyMatches(response, request: requestHeaders) else { return nil }
        return (response, found.storage)
    }

    /// The entry files `request`'s URL uses: its primary file and, behind a variant index, the variant
    /// `request` selects.
    func fileNames(for request: URLRequest) -> [String] {
        guard let url = request.url, let key = HTTPCacheKey.key(for: url) else { return [] }
        let primary = HTTPCacheKey.fileName(for: key)
        guard case .variantIndex(let fields, let generation)? = layer.read(primary, key: key, url: url)?.content else { return [primary] }
        let values = Self.varyValues(fields, request: HTTPHeaderFields(request: request))
        return [primary, HTTPCacheKey.variantFileName(for: key, generation: generation, values: values, fields: fields)]
    }

    /// The normalised values of the varied `fields` in `request` (absent fields absent).
    static func varyValues(_ fields: [String], request: HTTPHeaderFields) -> [String: String] {
        var values: [String: String] = [:]
        for field in fields {
            if let value = HTTPVary.normalisedValue(request[field], field: field) { values[field] = value }
        }
        return values
    }

    /// Whether `request` selects `stored` (RFC 9111 §4.1): every field its `Vary` names has the same
    /// normalised value (absent matches only absent); `Vary: *` never matches.
    static func varyMatches(_ stored: CachedHTTPResponse, request: HTTPHeaderFields) -> Bool {
        let vary = HTTPVary(stored.headers["Vary"])
        if vary == .any { return false }
        let fields = vary.fieldNames
        return varyValues(fields, request: request) == stored.varyValues.filter { fields.contains($0.key) }
    }

    // MARK: Background revalidation

    /// Claims the background revalidation of `fileName`; false when one is already in flight.
    func claimRevalidation(of fileName: String) -> Bool {
        lock.withLock { revalidating.insert(fileName).inserted }
    }

    func endRevalidation(of fileName: String) {
        let hook = lock.withLock {
            revalidating.remove(fileName)
            return revalidationEnded
        }
        hook?(fileName)
    }

    /// Tests: runs after each background revalidation has ended (whatever its outcome).
    var onRevalidationEnd: (@Sendable (String) -> Void)? {
        get { lock.withLock { revalidationEnded } }
        set { lock.withLock { revalidationEnded = newValue } }
    }

    var revalidationsInFlight: Int { lock.withLock { revalidating.count } }

    // MARK: Maintenance

    /// Scans the directory and trims it to 80% of the capacity if it is over (rarely needed by callers:
    /// writes trim by themselves).
    func trim(now: Date = Date()) {
        guard let disk else { return }
        layer.waitForQueuedWork()
        disk.trim(now: now)
    }

    /// Returns once every queued write (304 refreshes, invalidations, copies into a nearer tier) has reached its
    /// storage: before a process exits, so that nothing it learnt is lost.
    public func waitForQueuedWrites() {
        layer.waitForQueuedWork()
    }
}

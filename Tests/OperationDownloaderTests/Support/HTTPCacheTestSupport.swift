import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// A fresh directory for one test, removed by `remove()`.
///
/// It lives under one directory per test process, removed when the process exits: an HTTP cache's queued write
/// can land after its test removed the directory, and the cache then creates the directory again (as it must
/// when a user clears it). Those late entries go with the process's directory instead of piling up.
struct TemporaryCacheDirectory {
    let url: URL

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        url = Self.processDirectory.appendingPathComponent("\(safe)-\(UUID().uuidString)", isDirectory: true)
    }

    private static let processDirectory: URL = {
        atexit { try? FileManager.default.removeItem(at: TemporaryCacheDirectory.processDirectory) }
        return FileManager.default.temporaryDirectory
            .appendingPathComponent("HTTPCacheTests-\(getpid())", isDirectory: true)
    }()

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// Names of the entry files (regular files with entry names) now in the directory.
    var entryFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { name in
            var isDirectory: ObjCBool = false
            return HTTPCacheDirectory.isEntryName(name)
                && FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }.sorted()
    }
}

enum HTTPCacheFixtures {
    /// A fixed instant so that freshness arithmetic in tests never depends on the clock.
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func url(_ string: String) -> URL {
        URL(string: string) ?? URL(fileURLWithPath: "/invalid")
    }

    static func request(_ string: String, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url(string))
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    static func response(_ string: String, status: Int = 200, headers: [String: String] = [:]) throws -> HTTPURLResponse {
        try #require(HTTPURLResponse(url: url(string), statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers))
    }

    /// Deterministic bytes standing in for an image body (generated a word at a time: cheap in debug builds).
    static func body(_ seed: Int, count: Int) -> Data {
        var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for i in 0..<words.count {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            words[i] = state
        }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    /// Headers with a Date header at `date` plus `extra`.
    static func headers(date: Date = t0, _ extra: [String: String] = [:]) -> [String: String] {
        var result = ["Date": HTTPDate.format(date), "Content-Type": "image/png"]
        for (k, v) in extra { result[k] = v }
        return result
    }
}

/// Runs heavy or blocking test work on a thread of its own: on a 2-core machine the cooperative pool has two
/// threads, and a test holding one for seconds delays the async, cancellation-sensitive tests that run in
/// parallel with it. Not on a dispatch worker either: libdispatch on Linux replaces a blocked worker at most once
/// a second (Docs/Reliability.md, "Bugs found and fixed", 11). Expectations stay in the calling test: `body`
/// returns what to check.
func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// A counter safe to bump from concurrent closures.
final class HTTPCacheTestCounter: @unchecked Sendable {  // `count` guarded by `lock`
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Deterministic pseudo-random numbers for test inputs.
struct HTTPCacheTestRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A byte store that runs `beforeWrite` (with the value's name) before each write reaches the store it wraps:
/// a slow disk or server, for tests that watch what a cache does while its writes are held.
final class HookedByteStore: HTTPCacheByteStore, @unchecked Sendable {  // `beforeWrite` guarded by `lock`
    let wrapped: any HTTPCacheByteStore
    private let lock = NSLock()
    private var _beforeWrite: (@Sendable (String) -> Void)?

    init(_ wrapped: any HTTPCacheByteStore) {
        self.wrapped = wrapped
    }

    var beforeWrite: (@Sendable (String) -> Void)? {
        get { lock.withLock { _beforeWrite } }
        set { lock.withLock { _beforeWrite = newValue } }
    }

    func get(_ name: String, maximumLength: Int, unlessVersion version: HTTPCacheValueVersion?) -> HTTPCacheByteRead {
        wrapped.get(name, maximumLength: maximumLength, unlessVersion: version)
    }

    func set(_ name: String, _ value: Data, timeToLive: TimeInterval?) throws(HTTPCacheByteStoreError) -> HTTPCacheValueVersion {
        beforeWrite?(name)
        return try wrapped.set(name, value, timeToLive: timeToLive)
    }

    func delete(_ names: [String]) { wrapped.delete(names) }
    func delete(_ name: String, ifVersion version: HTTPCacheValueVersion) { wrapped.delete(name, ifVersion: version) }
    func deleteAll() { wrapped.deleteAll() }
}

extension HTTPImageCache {
    /// A directory cache whose writes pass through a `HookedByteStore` (returned with it).
    static func hooked(directory: URL) -> (HTTPImageCache, HookedByteStore) {
        let disk = HTTPCacheDirectoryStore(directory: directory, capacity: 150 * 1024 * 1024)
        let hooked = HookedByteStore(disk)
        let layer = HTTPCacheLayer(tiers: [directoryTier(disk, bytes: hooked)], memoryCapacity: 20 * 1024 * 1024, isShared: false,
                                   telemetry: CacheTelemetry())
        return (HTTPImageCache(layer: layer, directory: directory, disk: disk, diskCapacity: disk.capacity, memoryCapacity: 20 * 1024 * 1024), hooked)
    }
}

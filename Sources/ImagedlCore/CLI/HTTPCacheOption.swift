import Foundation
import OperationDownloader

/// `--http-cache DIR` (a private cache in a folder) or `--http-cache URL` (the cache a fleet shares on Redis:
/// `redis://`, `redis-sentinel://` or `redis-cluster://`), or both (two tiers, the first given nearest). Any other
/// `scheme://` is a usage error: a URL is never taken for a folder name. So that a password need not be on the
/// command line (where `ps` shows it), the URL may instead come from a file (`--http-cache-url-file FILE`, its
/// first line) or from the environment (`OD_REDIS_URL`, used when no `--http-cache` is given).
/// `--http-cache-size BYTES` sizes the folder.
enum HTTPCacheOption {
    static let environmentVariable = "OD_REDIS_URL"
    static let schemes: Set<String> = ["redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster"]
    static let forms = "a folder, redis://[user:password@]host:port[/db], redis-sentinel://host:port[,host:port…]/mastername[/db] "
        + "or redis-cluster://host:port[,host:port…]"

    static func parse(_ value: String, from source: String = "--http-cache", into options: inout DownloadOptions) throws(UsageError) {
        guard !value.isEmpty else { throw UsageError("\(source) needs a folder or a Redis URL (redis://, redis-sentinel://, redis-cluster://)") }
        guard let schemeEnd = value.range(of: "://") else {
            guard options.httpCacheDirectory == nil else {
                throw UsageError("\(source): one folder and one Redis URL at most (two folders given)")
            }
            options.httpCacheDirectory = value
            return
        }
        let scheme = value[..<schemeEnd.lowerBound].lowercased()
        guard schemes.contains(scheme) else {
            throw UsageError("\(source): unsupported scheme '\(scheme)://' (use \(forms))")
        }
        guard options.httpCacheRedisURL == nil else {
            throw UsageError("\(source): one folder and one Redis URL at most (two Redis URLs given)")
        }
        if scheme.hasPrefix("rediss") {
            // Kept as given: making the cache then fails with the library's own explanation (no TLS in its client).
            guard let url = URL(string: value), url.host != nil else { throw UsageError("\(source): '\(value)' is not a Redis URL") }
            options.httpCacheRedisURL = url
        } else {
            do {
                options.httpCacheRedisURL = try HTTPImageCache.redisURL(value)
            } catch {
                throw UsageError("\(source): '\(redacted(value))' is not a Redis URL (\(error))")
            }
        }
        options.httpCacheRedisIsNearest = options.httpCacheDirectory == nil
    }

    /// `--http-cache-size BYTES`: a whole number of bytes, or with K, M or G (1024-based), at least 64K.
    static func parseSize(_ value: String) throws(UsageError) -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(value)
        var unit = 1
        if let last = value.uppercased().last, let multiplier = units[last] {
            unit = multiplier
            digits = digits.dropLast()
        }
        guard let number = Int(digits), number > 0, number <= Int.max / unit, number * unit >= 64 << 10 else {
            throw UsageError("--http-cache-size needs a size of at least 64K, like 500M or 2G, not '\(value)'")
        }
        return number * unit
    }

    /// `--http-cache-url-file FILE`: the first non-blank line of FILE, read as `--http-cache`'s value.
    static func parseURLFile(_ path: String, into options: inout DownloadOptions) throws(UsageError) {
        guard !path.isEmpty else { throw UsageError("--http-cache-url-file needs a file") }
        let text: String
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard data.count <= 64 * 1024 else { throw UsageError("--http-cache-url-file: \(path) is over 64 KiB") }
            text = String(decoding: data, as: UTF8.self)
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("--http-cache-url-file: cannot read \(path): \(error.localizedDescription)")
        }
        guard let line = text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) })
            .first(where: { !$0.isEmpty }) else { throw UsageError("--http-cache-url-file: \(path) is empty") }
        try parse(line, from: "--http-cache-url-file", into: &options)
    }

    /// `OD_REDIS_URL`, when set and no `--http-cache` was given.
    static func applyEnvironment(_ environment: [String: String], to options: inout DownloadOptions) throws(UsageError) {
        guard !options.usesHTTPCache, let value = environment[environmentVariable], !value.isEmpty else { return }
        try parse(value, from: environmentVariable, into: &options)
    }

    /// `value` with its credentials hidden (for an error message that may be logged).
    private static func redacted(_ value: String) -> String {
        guard let schemeEnd = value.range(of: "://"), let at = value[schemeEnd.upperBound...].lastIndex(of: "@") else { return value }
        return String(value[..<schemeEnd.upperBound]) + "…" + value[at...]
    }
}

extension DownloadOptions {
    /// Whether `--http-cache` was given (a folder or Redis).
    var usesHTTPCache: Bool { httpCacheDirectory != nil || httpCacheRedisURL != nil }

    /// The HTTP cache `--http-cache` names: the folder (created if needed), Redis, or both as two tiers in the
    /// order given. Its warnings (folder not writable, Redis unreachable or refusing writes) go to standard
    /// error (through the downloader's log handler, `RunMetrics`, which also reports its metrics). nil without
    /// the option.
    func makeHTTPCache() throws -> HTTPImageCache? {
        var tiers: [HTTPImageCache] = []
        if let folder = httpCacheDirectory {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw HTTPCacheFolderError(message: "cannot create --http-cache folder \(folder): \(error.localizedDescription)")
            }
            let directory = URL(fileURLWithPath: folder, isDirectory: true)
            tiers.append(httpCacheSize.map { HTTPImageCache(directory: directory, diskCapacity: $0) } ?? HTTPImageCache(directory: directory))
        }
        if let url = httpCacheRedisURL {
            tiers.insert(try HTTPImageCache(redis: url), at: httpCacheRedisIsNearest ? 0 : tiers.count)
        }
        guard let cache = tiers.count > 1 ? try HTTPImageCache(tiers: tiers) : tiers.first else { return nil }
        cache.warningHandler = { message in Console.err("imagedl: \(message)\n") }
        return cache
    }
}

struct HTTPCacheFolderError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

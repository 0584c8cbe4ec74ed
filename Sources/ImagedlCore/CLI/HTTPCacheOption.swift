import Foundation
import OperationDownloader

/// `--http-cache DIR` (a private cache in a folder) or `--http-cache redis://[user:password@]host:port[/db]`
/// (the cache a fleet shares), or both (two tiers, the first given nearest). Any other `scheme://` is a usage
/// error: a URL is never taken for a folder name. `--http-cache-size BYTES` sizes the folder.
enum HTTPCacheOption {
    static func parse(_ value: String, into options: inout DownloadOptions) throws(UsageError) {
        guard !value.isEmpty else { throw UsageError("--http-cache needs a folder or a redis:// URL") }
        guard let schemeEnd = value.range(of: "://") else {
            guard options.httpCacheDirectory == nil else {
                throw UsageError("--http-cache: one folder and one redis:// URL at most (two folders given)")
            }
            options.httpCacheDirectory = value
            return
        }
        let scheme = value[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "redis" || scheme == "rediss" else {
            throw UsageError("--http-cache: unsupported scheme '\(scheme)://' (use a folder or redis://[user:password@]host:port[/db])")
        }
        guard let url = URL(string: value), url.host != nil else {
            throw UsageError("--http-cache: '\(value)' is not a redis://[user:password@]host:port[/db] URL")
        }
        guard options.httpCacheRedisURL == nil else {
            throw UsageError("--http-cache: one folder and one redis:// URL at most (two redis:// URLs given)")
        }
        options.httpCacheRedisURL = url
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

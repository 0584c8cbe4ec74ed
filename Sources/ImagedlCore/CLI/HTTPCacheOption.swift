import Foundation
import OperationDownloader

/// `--http-cache DIR` (a private cache in a folder) or `--http-cache redis://[user:password@]host:port[/db]`
/// (the cache a fleet shares). Any other `scheme://` is a usage error: a URL is never taken for a folder name.
enum HTTPCacheOption {
    static func parse(_ value: String, into options: inout DownloadOptions) throws(UsageError) {
        guard !value.isEmpty else { throw UsageError("--http-cache needs a folder or a redis:// URL") }
        guard let schemeEnd = value.range(of: "://") else {
            options.httpCacheDirectory = value
            options.httpCacheRedisURL = nil
            return
        }
        let scheme = value[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "redis" || scheme == "rediss" else {
            throw UsageError("--http-cache: unsupported scheme '\(scheme)://' (use a folder or redis://[user:password@]host:port[/db])")
        }
        guard let url = URL(string: value), url.host != nil else {
            throw UsageError("--http-cache: '\(value)' is not a redis://[user:password@]host:port[/db] URL")
        }
        options.httpCacheRedisURL = url
        options.httpCacheDirectory = nil
    }
}

extension DownloadOptions {
    /// Whether `--http-cache` was given (a folder or Redis).
    var usesHTTPCache: Bool { httpCacheDirectory != nil || httpCacheRedisURL != nil }

    /// The HTTP cache `--http-cache` names: the folder (created if needed) or Redis, whose warnings (server
    /// unreachable, refusing writes) go to standard error (through the downloader's log handler, `RunMetrics`).
    /// nil without the option.
    func makeHTTPCache() throws -> HTTPImageCache? {
        if let url = httpCacheRedisURL {
            let cache = try HTTPImageCache(redis: url)
            cache.warningHandler = { message in Console.err("imagedl: \(message)\n") }
            return cache
        }
        guard let folder = httpCacheDirectory else { return nil }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw HTTPCacheFolderError(message: "cannot create --http-cache folder \(folder): \(error.localizedDescription)")
        }
        return HTTPImageCache(directory: URL(fileURLWithPath: folder, isDirectory: true))
    }
}

struct HTTPCacheFolderError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

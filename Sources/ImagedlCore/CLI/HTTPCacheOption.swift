import Foundation
import OperationDownloader

/// `--http-cache DIR` (a private cache in a folder) or `--http-cache URL` (the cache a fleet shares on Redis:
/// `redis://`, `redis-sentinel://` or `redis-cluster://`). Any other `scheme://` is a usage error: a URL is
/// never taken for a folder name. So that a password need not be on the command line (where `ps` shows it), the
/// URL may instead come from a file (`--http-cache-url-file FILE`, its first line) or from the environment
/// (`OD_REDIS_URL`, used when no `--http-cache` is given).
enum HTTPCacheOption {
    static let environmentVariable = "OD_REDIS_URL"
    static let schemes: Set<String> = ["redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster"]
    static let forms = "a folder, redis://[user:password@]host:port[/db], redis-sentinel://host:port[,host:port…]/mastername[/db] "
        + "or redis-cluster://host:port[,host:port…]"

    static func parse(_ value: String, from source: String = "--http-cache", into options: inout DownloadOptions) throws(UsageError) {
        guard !value.isEmpty else { throw UsageError("\(source) needs a folder or a Redis URL (redis://, redis-sentinel://, redis-cluster://)") }
        guard let schemeEnd = value.range(of: "://") else {
            options.httpCacheDirectory = value
            options.httpCacheRedisURL = nil
            return
        }
        let scheme = value[..<schemeEnd.lowerBound].lowercased()
        guard schemes.contains(scheme) else {
            throw UsageError("\(source): unsupported scheme '\(scheme)://' (use \(forms))")
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
        options.httpCacheDirectory = nil
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

    /// The HTTP cache `--http-cache` names: the folder (created if needed) or Redis, whose warnings (server
    /// unreachable, refusing writes) go to standard error. nil without the option.
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

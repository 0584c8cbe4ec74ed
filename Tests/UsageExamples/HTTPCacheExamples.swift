// The examples of Docs/Usage.md, "The HTTP cache" (see AsyncExamples.swift for how the doc quotes them).
import Decoding
import Foundation
import OperationDownloader

// snippet: http-cache-directory
/// A downloader whose every download uses an HTTP cache kept in `directory` (RFC 9111, a private cache):
/// fresh responses are served without a request, stale ones are revalidated (a 304 reuses the stored bytes).
/// Several downloaders and processes may share one directory.
public func makeCachingDownloader(directory: URL) -> ImageDownloader {
    var configuration = ImageDownloaderConfiguration()
    configuration.httpCache = HTTPImageCache(directory: directory, diskCapacity: 500 * 1024 * 1024)
    configuration.defaultOptions = [.useURLCache]  // on for every call, without passing it each time
    return ImageDownloader(configuration: configuration)
}
// end snippet

// snippet: http-cache-redis
/// A downloader sharing its HTTP cache with every process that uses the same Redis (a fleet of servers): a
/// response one process stored is a hit for all, and on a miss one process fetches while the others wait for
/// it. `redis` is like `redis://cache.internal:6379/0`. Redis down or slow: downloads go to the origin, with
/// one warning; a download never fails because of the cache. The default key prefix ("od") is also
/// `imagedl --http-cache redis://...`'s, so an app and the command-line tool share their entries.
public func makeFleetDownloader(redis: URL) throws -> ImageDownloader {
    var configuration = ImageDownloaderConfiguration()
    configuration.httpCache = try HTTPImageCache(redis: redis)
    configuration.defaultOptions = [.useURLCache]
    return ImageDownloader(configuration: configuration)
}
// end snippet

// snippet: http-cache-source
/// Where the image came from: `.network`, `.httpCache`, `.revalidatedHTTPCache` (a 304 confirmed the stored
/// bytes) or `.memoryCache` (the memory cache of decoded images answered: no download at all).
public func source(of url: URL, with downloader: ImageDownloader) async throws -> ImageDownloadMetrics.Source {
    try await downloader.image(for: url).source
}
// end snippet

// snippet: http-cache-max-stale
/// For a server that sends no Cache-Control: accept stored responses up to a day past their (heuristic)
/// freshness without asking the server again. The header goes out with every request of this downloader.
public func makeDownloaderTrustingItsCache(directory: URL) -> ImageDownloader {
    let downloader = makeCachingDownloader(directory: directory)
    downloader.setValue("max-stale=86400", forHTTPHeaderField: "Cache-Control")
    return downloader
}
// end snippet

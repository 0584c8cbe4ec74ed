import Foundation
import OperationDownloader

extension DownloadOptions {
    /// The configuration every command that downloads (`imagedl URL...`, `imagedl thumbnail URL...`) builds its
    /// downloader from, so that a network option means the same in each: timeouts, `--retry` (which also
    /// resumes a body cut short), credentials, the transport and its TLS and proxy settings, the HTTP cache,
    /// `--allow-incomplete`.
    func downloaderConfiguration(httpCache: HTTPImageCache?) -> ImageDownloaderConfiguration {
        var configuration = ImageDownloaderConfiguration()
        configuration.maxConcurrentDownloads = concurrency
        configuration.downloadTimeout = timeout
        configuration.maximumDownloadDuration = maxTime
        if retry > 0 {
            configuration.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: retry + 1)
        }
        configuration.executionOrder = lifo ? .lifo : .fifo
        configuration.username = user
        configuration.password = password
        configuration.allowsIncompleteImages = allowIncomplete
        TransportOptions.apply(self, to: &configuration)
        // Only the folder (or Redis) the user named: without --http-cache nothing is read from or written to disk.
        configuration.httpCache = httpCache
        return configuration
    }

    /// A downloader with `configuration` and the `--header` values.
    func makeDownloader(_ configuration: ImageDownloaderConfiguration) -> ImageDownloader {
        let downloader = ImageDownloader(configuration: configuration)
        for header in headers {
            downloader.setValue(header.value, forHTTPHeaderField: header.name)
        }
        return downloader
    }

    /// The options of every request: the HTTP cache with `--http-cache`, any certificate with `--insecure`.
    var requestOptions: ImageDownloaderOptions {
        var set: ImageDownloaderOptions = []
        if usesHTTPCache { set.insert(.useURLCache) }
        if insecure { set.insert(.allowInvalidSSLCertificates) }
        return set
    }
}

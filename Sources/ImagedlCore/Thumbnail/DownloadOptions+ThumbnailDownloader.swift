import Foundation
import OperationDownloader

extension DownloadOptions {
    /// A downloader for `imagedl thumbnail`'s URL inputs, configured from the download options the command
    /// line gave (timeout, credentials, headers, HTTP cache). Keep in step with
    /// `DownloadCommand.makeDownloader` when network options are added there.
    func makeThumbnailDownloader(metrics: RunMetrics? = nil) throws -> ImageDownloader {
        var configuration = ImageDownloaderConfiguration()
        metrics?.configure(&configuration)
        configuration.maxConcurrentDownloads = concurrency
        configuration.downloadTimeout = timeout
        configuration.maximumDownloadDuration = maxTime
        configuration.username = user
        configuration.password = password
        configuration.httpCache = try makeHTTPCache()
        let downloader = ImageDownloader(configuration: configuration)
        for header in headers { downloader.setValue(header.value, forHTTPHeaderField: header.name) }
        return downloader
    }
}

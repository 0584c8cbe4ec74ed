// The examples of Docs/Usage.md, "async/await". Everything between a `// snippet: NAME` line and the next
// `// end snippet` line appears verbatim in the doc (UsageDocSnippetTests checks it); edit here, then run
// `OD_UPDATE_USAGE_DOC=1 swift test --skip-build --filter UsageDocSnippetTests` to copy the changes into the doc.
// snippet: imports
import Decoding
import Foundation
import OperationDownloader
// end snippet

// snippet: first-download
/// One image: its format, size and where it came from.
public func describeImage(at url: URL) async throws -> String {
    let result = try await ImageDownloader.shared.image(for: url)
    guard let image = result.image else { return "no image: .avoidDecodeImage delivers the data only" }
    // result.source: .network, .httpCache, .revalidatedHTTPCache or .memoryCache (then there are no metrics:
    // no download happened).
    let origin = result.metrics.map { "\($0)" } ?? "\(result.source)"
    return "\(image.format) \(image.width)x\(image.height) from \(origin)"
}
// end snippet

// snippet: async-progress
/// Downloads `url`, reporting progress as a fraction (nil while the server has not said how big the body is).
public func download(
    _ url: URL, with downloader: ImageDownloader, progress: @escaping @Sendable (Double?) -> Void
) async throws -> ImageDownloadResult {
    try await downloader.image(for: url) { received, expected in
        progress(expected > 0 ? Double(received) / Double(expected) : nil)
    }
}
// end snippet

// snippet: async-cancellation
/// Cancelling the Task cancels the download: the Task ends with `CancellationError`.
public func downloadAndCancel(_ url: URL, with downloader: ImageDownloader) async -> String {
    let task = Task { try await downloader.image(for: url) }
    task.cancel()  // e.g. the request that wanted this image went away
    do {
        let result = try await task.value
        return "finished first: \(result.data.count) bytes"
    } catch is CancellationError {
        // Only this caller is cancelled: other callers of the same URL keep their download.
        return "cancelled"
    } catch {
        return "failed: \(error)"
    }
}
// end snippet

// snippet: async-events
/// A progressive JPEG as it arrives: partial images (`isIncomplete == true`), then the final image.
public func progressiveImages(_ url: URL, with downloader: ImageDownloader) async throws -> [DecodedImage] {
    var images: [DecodedImage] = []
    for try await event in downloader.events(for: url, options: .progressiveLoad) {
        switch event {
        case .progress:
            break  // .progress(received:expected:), as image(for:progress:) reports it
        case .partialImage(let partial):
            images.append(partial)
        case .completed(let result):
            if let image = result.image { images.append(image) }
        }
    }
    return images
}
// end snippet

// snippet: failure-story
/// Retries, then tells what happened: `imageResult(for:)` returns the failure with its attempts and metrics.
public func downloadReportingFailure(_ url: URL, with downloader: ImageDownloader) async -> String {
    let retries = ImageDownloaderRetryPolicy(maximumAttempts: 3, initialDelay: 0.1, maximumDelay: 2)
    switch await downloader.imageResult(for: url, context: ImageDownloaderContext(retryPolicy: retries)) {
    case .success(let result):
        return "ok after \(result.metrics?.attemptCount ?? 0) attempt(s)"
    case .failure(let failure):
        // "unacceptable HTTP status 503 (Service Unavailable) (after 3 attempts)"
        var report = "\(failure)"
        if let metrics = failure.metrics { report += "; last attempt: \(metrics)" }
        return report
    }
}
// end snippet

// snippet: many-downloads
/// Fifty images at once: start them all; the downloader runs `maxConcurrentDownloads` at a time (6 by
/// default) and joins duplicate URLs into one request.
public func thumbnails(
    of urls: [URL], with downloader: ImageDownloader
) async -> [URL: Result<ImageDownloadResult, ImageDownloadFailure>] {
    await withTaskGroup(of: (URL, Result<ImageDownloadResult, ImageDownloadFailure>).self) { group in
        for url in urls {
            group.addTask { (url, await downloader.imageResult(for: url, context: .thumbnail(maxPixelSize: 256))) }
        }
        var results: [URL: Result<ImageDownloadResult, ImageDownloadFailure>] = [:]
        for await (url, result) in group { results[url] = result }
        return results
    }
}
// end snippet

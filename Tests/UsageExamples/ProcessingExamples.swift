// The examples of Docs/Usage.md, "Thumbnails and transformers" and "Prefetching" (see AsyncExamples.swift for
// how the doc quotes them).
import Decoding
import Foundation
import OperationDownloader

// snippet: thumbnail
/// A thumbnail that fits in 256×256 pixels, decoded small (JPEGs shrink while decoding: a 12 MP photo never
/// exists at full size in memory).
public func thumbnail(of url: URL, with downloader: ImageDownloader) async throws -> DecodedImage? {
    try await downloader.image(for: url, context: .thumbnail(maxPixelSize: 256)).image
}
// end snippet

// snippet: transformer
/// A round 128×128 avatar: decode small, fill the square (centre crop), cut the circle. The transformer's key
/// is part of the memory-cache key, so avatars and full images of one URL are cached apart.
public func avatar(of url: URL, with downloader: ImageDownloader) async throws -> DecodedImage? {
    var context = ImageDownloaderContext.thumbnail(maxPixelSize: 256)
    context.transformer = ImagePipelineTransformer([
        ImageResizingTransformer(width: 128, height: 128, mode: .fill),
        ImageRoundCornerTransformer.circle,
    ])
    return try await downloader.image(for: url, context: context).image
}
// end snippet

// snippet: prefetch
/// Warms the caches for images needed soon: at most 4 at a time, low priority (downloads someone waits for go
/// first), each tried up to 3 times on a network error or a 408/429/5xx.
public func prefetch(_ urls: [URL], with downloader: ImageDownloader) async -> (finished: Int, skipped: Int) {
    let retries = ImageDownloaderRetryPolicy(maximumAttempts: 3, initialDelay: 0.25, maximumDelay: 5)
    let prefetcher = ImagePrefetcher(
        downloader: downloader, maxConcurrentPrefetchCount: 4, options: [.lowPriority],
        context: ImageDownloaderContext(retryPolicy: retries))
    // `finished` is urls.count once all have ended; `skipped` counts those that failed or were cancelled.
    // (`prefetcher.prefetch(urls, progress:completed:)` is the callback form; it returns a token to cancel.)
    return await prefetcher.prefetchAndWait(urls)
}
// end snippet

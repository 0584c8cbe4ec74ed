import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the async API returns for a finished download.
public struct ImageDownloadResult: Sendable {
    /// The decoded image (`nil` with `.avoidDecodeImage`).
    public var image: DecodedImage?
    /// The downloaded bytes (empty for a memory-cache hit, which has no bytes).
    public var data: Data
    /// The final HTTP response (`nil` for a memory-cache hit).
    public var response: HTTPURLResponse?
    /// Measured timings (`nil` for a memory-cache hit).
    public var metrics: ImageDownloadMetrics?
    /// Where the image came from: `.memoryCache` (decoded images, no bytes and no metrics), `.httpCache` (a
    /// stored response, without a request; a shared Redis tier too), `.revalidatedHTTPCache` (a stored body
    /// the server confirmed with 304) or `.network`.
    public var source: ImageDownloadMetrics.Source

    /// `source` nil: the metrics' source, or `.memoryCache` without metrics.
    public init(
        image: DecodedImage?, data: Data, response: HTTPURLResponse?, metrics: ImageDownloadMetrics?,
        source: ImageDownloadMetrics.Source? = nil
    ) {
        self.image = image
        self.data = data
        self.response = response
        self.metrics = metrics
        self.source = source ?? metrics?.source ?? .memoryCache
    }
}

/// One element of `ImageDownloader.events(for:)`.
public enum ImageDownloadEvent: Sendable {
    /// Bytes received so far and the expected total (-1 when unknown).
    case progress(received: Int, expected: Int)
    /// A partial image of a progressive download (`isIncomplete == true`).
    case partialImage(DecodedImage)
    /// The final result; the stream ends after it.
    case completed(ImageDownloadResult)
}

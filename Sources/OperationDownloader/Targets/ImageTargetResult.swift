import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `ImageTarget.setImage` delivers when the image was shown.
public struct ImageTargetResult: Sendable {
    /// Where the image came from.
    public enum Source: Sendable, Equatable {
        /// The downloader's memory cache (shown before `setImage` returned).
        case memoryCache
        /// A download (possibly joined with other callers of the same URL).
        case network
    }

    /// The image given to `displayImage(_:)`.
    public let image: DecodedImage
    /// The downloaded bytes; `nil` for memory-cache hits.
    public let data: Data?
    /// The URL that was requested.
    public let url: URL?
    /// Memory cache or network.
    public let source: Source
    /// The HTTP response; `nil` for memory-cache hits and `data:` URLs.
    public let response: HTTPURLResponse?
    /// The download's measurements; `metrics.source` says whether the bytes came from the HTTP cache.
    /// `nil` for memory-cache hits.
    public let metrics: ImageDownloadMetrics?

    public init(
        image: DecodedImage, data: Data?, url: URL?, source: Source, response: HTTPURLResponse? = nil,
        metrics: ImageDownloadMetrics? = nil
    ) {
        self.image = image
        self.data = data
        self.url = url
        self.source = source
        self.response = response
        self.metrics = metrics
    }
}

import Foundation

/// Timings and sizes of one download, measured by the package itself (URLSession on Linux delivers no
/// task metrics). All dates are wall-clock; `nil` means the phase was not reached.
public struct ImageDownloadMetrics: Sendable, Equatable {
    /// Where the image of a download came from (Kingfisher's `cacheType`, Nuke's `ImageResponse.cacheType`).
    public enum Source: Sendable, Equatable, CaseIterable {
        /// A response body from the server.
        case network
        /// The HTTP cache (`.useURLCache`: its directory, memory layer or Redis), without any request; also a
        /// stale stored response served instead of an error (`servedStale`).
        case httpCache
        /// The HTTP cache after the server answered a conditional request with 304 Not Modified.
        case revalidatedHTTPCache
        /// The downloader's memory cache of decoded images: no bytes, no request
        /// (`ImageDownloadResult.source`; such a result has no metrics).
        case memoryCache
    }

    /// Where the bytes came from (default `.network`).
    public var source: Source = .network
    /// The HTTP cache served a stored response although it was stale: within `stale-while-revalidate` (a
    /// background request revalidates it), within `stale-if-error` (the server failed or answered 5xx), or
    /// as the request's `max-stale` or cache policy allowed. `source` is `.httpCache`.
    public var servedStale = false
    /// The HTTP cache is shared (Redis) and another download of the fleet was fetching this URL: this one
    /// waited for it (single-flight) instead of sending its own request, then read the cache again.
    public var waitedForSharedFetch = false
    /// When the operation was created (queued).
    public var queuedAt: Date
    /// When the operation started its network task.
    public var startedAt: Date?
    /// When the (final) response headers arrived.
    public var responseAt: Date?
    /// When the first body byte arrived.
    public var firstByteAt: Date?
    /// When the operation finished (after decoding).
    public var finishedAt: Date?
    /// Body bytes received for the final response.
    public var receivedBytes: Int
    /// The size the response announced, or -1 when unknown.
    public var expectedBytes: Int
    /// The final HTTP status code.
    public var statusCode: Int?
    /// How many redirects were followed.
    public var redirectCount: Int
    /// Requests sent: 1 for a download without retries, more with them (Docs/Options.md); 0 when the HTTP cache
    /// answered without a request (a stored 404 included) or the download ended before its first request.
    /// Counts requests a transport re-sent on its own too. (A value made with `init` says 1.)
    public var attemptCount: Int = 1
    /// The first byte the final response started at when a retry resumed a body cut short with
    /// `Range: bytes=N-` (the bytes before it came from earlier attempts); nil when the body came whole.
    public var resumedFromByte: Int?
    /// The HTTP version of the final response ("1.1", "2"), where the transport tells.
    public var httpVersion: String?
    /// The server's address as connected ("127.0.0.1", "::1"), where the transport tells.
    public var remoteAddress: String?
    /// Whether the final request reused an open connection, where the transport tells.
    public var connectionReused: Bool?
    /// Time spent resolving the host name, where the transport tells.
    public var domainLookupDuration: TimeInterval?
    /// Time spent opening the TCP connection, where the transport tells.
    public var connectDuration: TimeInterval?
    /// Time spent on the TLS handshake, where the transport tells.
    public var secureConnectionDuration: TimeInterval?

    public init(queuedAt: Date = Date()) {
        self.queuedAt = queuedAt
        self.receivedBytes = 0
        self.expectedBytes = -1
        self.redirectCount = 0
    }

    /// Time spent waiting in the queue.
    public var queueDuration: TimeInterval? { startedAt.map { $0.timeIntervalSince(queuedAt) } }
    /// Start of the task to the response headers.
    public var timeToResponse: TimeInterval? {
        guard let s = startedAt, let r = responseAt else { return nil }
        return r.timeIntervalSince(s)
    }
    /// Start of the task to the end (transfer and decode).
    public var totalDuration: TimeInterval? {
        guard let s = startedAt, let f = finishedAt else { return nil }
        return f.timeIntervalSince(s)
    }
}

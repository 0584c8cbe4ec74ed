import Decoding
import Foundation
import OperationDownloader

/// Everything the progress display, the summary table and `--json` know about one URL.
struct DownloadRecord: Sendable {
    enum State: String, Sendable {
        case waiting, downloading, succeeded, failed, cancelled
    }

    /// Position on the command line, from 0.
    let index: Int
    let url: URL
    /// Short name for display: the URL's last path component.
    let name: String
    var state: State = .waiting
    var received = 0
    /// From Content-Length; -1 when unknown.
    var expected = -1
    /// Monotonic seconds (see `Clock.now`).
    var startedAt: Double?
    var finishedAt: Double?
    var httpStatus: Int?
    var format: ImageFormat?
    var width: Int?
    var height: Int?
    var frames: Int?
    /// Size of the body as received.
    var bytes: Int?
    /// Where a cache answered from, without transferring the body (nil: the server sent it).
    enum CacheResult: String, Sendable {
        /// The memory cache of decoded images.
        case memory
        /// A fresh response of the HTTP cache (`--http-cache`).
        case hit
        /// A stale response of the HTTP cache (stale-while-revalidate, stale-if-error, or the origin unreachable).
        case stale
        /// A stored response the server confirmed with 304 Not Modified.
        case revalidated
    }

    /// Served from the memory cache or the HTTP cache (`--http-cache`) without transferring the body.
    var cacheHit: Bool { cacheResult != nil }
    var cacheResult: CacheResult?
    /// Where the image came from (`ImageDownloadResult.source`); nil until it finished, and for a failure that
    /// no cache answered.
    var source: ImageDownloadMetrics.Source?
    /// A retry resumed the body from this byte (`metrics.resumedFromByte`).
    var resumedFrom: Int?
    /// The image's data ended early and the decoded part was kept (`--allow-incomplete`).
    var incomplete = false
    /// The HTTP cache is shared (`--http-cache redis://`) and another process was fetching this URL: this
    /// download waited for it (single-flight) instead of sending its own request.
    var waitedForSharedFetch = false
    /// What the transport measured (`--json`'s "network"; for a failure, its last attempt; nil when no attempt
    /// started, and for a memory-cache hit).
    var network: NetworkSummary?
    var error: String?
    /// The exact file `--output` wrote: the folder as given, joined with the file's name.
    var savedTo: String?
    /// Requests sent for this URL (`metrics.attemptCount`; more than 1 only with `--retry`); 0 when it was served
    /// from the memory or HTTP cache without a request (a stored 404 too), or failed before any request.
    var attempts: Int?
    /// The newest partial image (progressive) or the final one, for `--preview`.
    var image: DecodedImage?

    init(index: Int, url: URL) {
        self.index = index
        self.url = url
        let last = url.lastPathComponent
        name = (last.isEmpty || last == "/") ? (url.host ?? url.absoluteString) : last
    }

    var isFinished: Bool { state == .succeeded || state == .failed || state == .cancelled }

    /// Seconds from start to finish (or to `now` while running).
    func elapsed(now: Double) -> Double {
        guard let startedAt else { return 0 }
        return max(0, (finishedAt ?? now) - startedAt)
    }

    /// One JSON object for `--json`.
    var json: JSONValue {
        func optional(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
        return .object([
            ("url", .string(url.absoluteString)),
            ("status", .string(state == .succeeded ? "ok" : state == .cancelled ? "cancelled" : "error")),
            ("http_status", optional(httpStatus)),
            ("format", format.map { .string($0.rawValue) } ?? .null),
            ("width", optional(width)),
            ("height", optional(height)),
            ("frames", optional(frames)),
            ("bytes", optional(bytes)),
            ("seconds", .double(elapsed(now: finishedAt ?? 0))),
            ("cache_hit", .bool(cacheHit)),
            // "hit" for either cache's answer without a request; "source" says which.
            ("cache", cacheResult.map { .string($0 == .memory ? "hit" : $0.rawValue) } ?? .null),
            ("source", source.map { .string($0.jsonName) } ?? .null),
            ("shared_wait", .bool(waitedForSharedFetch)),
            ("attempts", optional(attempts)),
            ("resumed_from", optional(resumedFrom)),
            ("incomplete", state == .succeeded ? .bool(incomplete) : .null),
            ("network", network?.json ?? .null),
            ("file", savedTo.map(JSONValue.string) ?? .null),
            ("error", error.map(JSONValue.string) ?? .null),
        ])
    }
}

/// Monotonic time in seconds, for elapsed times and rates (wall-clock jumps do not disturb them).
enum Clock {
    static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}

extension ImageDownloadMetrics.Source {
    /// `--json`'s "source": "memory_cache", "http_cache", "revalidated_http_cache" or "network".
    var jsonName: String {
        switch self {
        case .memoryCache: return "memory_cache"
        case .httpCache: return "http_cache"
        case .revalidatedHTTPCache: return "revalidated_http_cache"
        case .network: return "network"
        }
    }
}

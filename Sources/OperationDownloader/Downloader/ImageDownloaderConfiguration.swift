import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// In which order queued downloads start.
public enum ImageDownloaderExecutionOrder: Sendable {
    /// First in, first out.
    case fifo
    /// Last in, first out: each new download becomes a dependency of every pending one.
    case lifo
}

/// Everything an `ImageDownloader` is created with. A value: the downloader keeps its own copy, so later
/// changes to this value do not affect a downloader already created. The initial values are the package's
/// defaults (`DownloadDefaults`, Downloader/ResolvedOptions.swift).
public struct ImageDownloaderConfiguration {
    /// How many downloads run at once (SDWebImage's default: 6).
    public var maxConcurrentDownloads: Int = 6
    /// The idle timeout (SDWebImage's meaning): a download fails with `.network(URLError(.timedOut))` when no
    /// byte arrived for this many seconds. 0 or less means 15 s. Decoding never counts against it.
    public var downloadTimeout: TimeInterval = DownloadDefaults.idleTimeout
    /// An optional cap on the whole transfer of one attempt (network only: decoding never counts); nil = none.
    /// Fails with `.network(URLError(.timedOut))`.
    public var maximumDownloadDuration: TimeInterval?
    /// Which engine carries the HTTP exchanges. Unless set: `ImageDownloaderTransport.platformDefault` (curl on
    /// Linux where libcurl loads, URLSession elsewhere), or URLSession for a downloader with a custom
    /// `operationClass` or `sessionConfiguration`.
    public var transport: ImageDownloaderTransport {
        get { chosenTransport ?? defaultTransport }
        set { chosenTransport = newValue }
    }
    /// The transport set explicitly; nil: the default.
    private var chosenTransport: ImageDownloaderTransport?
    /// What a configuration that names no transport uses: URLSession when it holds something only URLSession
    /// serves (an operation class, whose subclasses may override the URLSession delegate methods; a session
    /// configuration).
    private var defaultTransport: ImageDownloaderTransport {
        operationClass == nil && !hasCustomSessionConfiguration ? .platformDefault : .urlSession
    }
    /// Certificate verification for the curl transport: a CA file, pinned keys (URLSession ignores it).
    public var tls: ImageDownloaderTLSConfiguration = .systemDefault
    /// The proxy for the curl transport: the environment (default), none, or a URL (URLSession ignores it).
    public var proxy: ImageDownloaderProxyConfiguration = .environment
    /// When failed downloads are tried again (default `.never`); the context can override it per request.
    public var retryPolicy: ImageDownloaderRetryPolicy = DownloadDefaults.retryPolicy
    /// Report progress only after this fraction (0...1) of the expected size arrived since the last report
    /// (the last report is always delivered). 0 reports every chunk.
    public var minimumProgressInterval: Double = 0
    /// FIFO or LIFO.
    public var executionOrder: ImageDownloaderExecutionOrder = .fifo
    /// The session configuration to copy (URLSession transport: setting it makes URLSession the default
    /// transport). The downloader always turns off the session's URL cache and cookie handling (see
    /// Docs/Linux.md) and raises `httpMaximumConnectionsPerHost` to `maxConcurrentDownloads`.
    public var sessionConfiguration: URLSessionConfiguration {
        get { customSessionConfiguration ?? .default }
        set { customSessionConfiguration = newValue }
    }
    private var customSessionConfiguration: URLSessionConfiguration?
    var hasCustomSessionConfiguration: Bool { customSessionConfiguration != nil }
    /// The operation class to create (default `ImageDownloaderOperation`).
    public var operationClass: (any ImageDownloaderOperationProtocol.Type)?
    /// The credential answered to authentication challenges.
    public var urlCredential: URLCredential?
    /// With `password`: a credential used when `urlCredential` is nil.
    public var username: String?
    /// With `username`: a credential used when `urlCredential` is nil.
    public var password: String?
    /// Accepted HTTP status codes; `nil` means 200..<300.
    public var acceptableStatusCodes: IndexSet?
    /// Accepted MIME types (lower-case, "image/*" style wildcards allowed); `nil` accepts any.
    public var acceptableContentTypes: Set<String>?
    /// Where completions and notifications run; `nil` means the main queue on Apple platforms and a
    /// private serial queue elsewhere (Linux programs rarely spin the main run loop).
    public var callbackQueue: DispatchQueue?
    /// The memory cache consulted before downloading and filled after decoding; `nil` disables it.
    public var imageCache: (any ImageRequestCache)? = AutoPurgingImageCache()
    /// Options every download of this downloader gets, added to each call's own options (default none): put
    /// `.useURLCache` here to keep the HTTP cache on for every call, `.scaleDownLargeImages` to bound memory
    /// everywhere. A call cannot take away an option set here; where both priorities end up set,
    /// `.highPriority` wins. Prefetchers and image targets using this downloader get them too.
    public var defaultOptions: ImageDownloaderOptions = []
    /// The HTTP cache used by requests with `.useURLCache` (URLSession's own cache is always off: on Linux it
    /// never stores and ignores cache policies). Default `HTTPImageCache.shared`, under the user cache
    /// directory, which touches the disk only once a request uses `.useURLCache`; `nil` disables it.
    public var httpCache: HTTPImageCache? = HTTPImageCache.shared
    /// Bodies larger than this fail with `.responseTooLarge` (checked against the announced length and
    /// while receiving). Default 256 MiB.
    public var maximumResponseSize: Int = DownloadDefaults.maximumResponseSize
    /// At most one partial image per this many seconds for `.progressiveLoad`. Default 0.1 s.
    public var progressiveDecodingInterval: TimeInterval = DownloadDefaults.progressiveDecodingInterval
    /// Deliver an image whose data ended early (a truncated file the decoder could partly decode) marked
    /// `isIncomplete = true`, instead of failing with `.badImageData` (the default, as SDWebImage and Nuke do).
    /// Such an image is never memory-cached. The context can override it per caller.
    public var allowsIncompleteImages = DownloadDefaults.allowsIncompleteImages
    /// Images whose header declares more pixels fail before any pixel memory is allocated.
    public var maximumPixelCount: Int = DownloadDefaults.maximumPixelCount
    /// The coders to decode with.
    public var codersManager: ImageCodersManager = DownloadDefaults.codersManager
    /// Whether operations post `imageDownloadStart`, `imageDownloadReceiveResponse`, `imageDownloadStop` and
    /// `imageDownloadFinish`. Turn it off in a server or crawler that never observes them: on Linux the
    /// start and response notifications cost a hop to the callback queue each, a measurable share of the
    /// throughput of small downloads (Docs/Benchmarks.md, `download_quiet_ratio_vs_urlsession`).
    public var postsNotifications: Bool = DownloadDefaults.postsNotifications
    /// Where the downloader reports its metrics (`PrometheusMetrics`, or an adapter): requests, downloads, the
    /// HTTP cache, retries, decodes, the queue (Docs/Observability.md). nil (the default) costs nothing. The
    /// HTTP cache reports its own events (Redis, write failures) here too unless it has a sink of its own.
    public var metricsSink: (any ImageDownloaderMetricsSink)?
    /// Spans per download, per request and per decode (Docs/Observability.md); nil: none.
    public var tracer: (any ImageDownloaderTracer)?
    /// Where the downloader's log messages go (retries, budget refusals and waits, invalid trace context), and
    /// the HTTP cache's unless it has a handler of its own; nil: warnings to standard error, as before.
    public var logHandler: (any ImageDownloaderLogHandler)?
    /// The most distinct servers (host and port) reported as `server_address` and `server_port`; later ones are
    /// reported as `_other` without a port, so a crawler's metrics stay bounded. Default 100.
    public var metricsServerAddressLimit: Int = DownloadDefaults.metricsServerAddressLimit

    public init() {}

    /// The credential to answer challenges with: `urlCredential`, else one made of `username`/`password`.
    var effectiveCredential: URLCredential? {
        if let urlCredential { return urlCredential }
        guard let username, let password else { return nil }
        return URLCredential(user: username, password: password, persistence: .forSession)
    }
}

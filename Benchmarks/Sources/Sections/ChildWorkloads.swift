import Foundation
import OperationDownloader

/// Workloads run in a child process of the benchmark (`Benchmarks child NAME --base-url URL --count N`),
/// so their peak RSS and instruction counts are theirs alone.
enum ChildWorkload: String, CaseIterable {
    /// N downloads of the 12 MP JPEG (distinct query strings) with `.scaleDownLargeImages`, defaults otherwise.
    case memoryLarge = "memory-large"
    /// N downloads of the small JPEGs, decode off (`.avoidDecodeImage`): what the downloader itself retains.
    case memoryMany = "memory-many"
    /// N downloads of the small images with decoding and the default memory cache (100 MB).
    case memoryManyDecoded = "memory-many-decoded"
    /// N small downloads through ImageDownloader, decode off (run under callgrind).
    case instructionsDownloader = "instructions-downloader"
    /// As `instructionsDownloader`, with `postsNotifications = false`: the four notifications' share.
    case instructionsDownloaderQuiet = "instructions-downloader-quiet"
    /// As `instructionsDownloader`, with a `PrometheusMetrics` sink: what metrics cost per download.
    case instructionsDownloaderMetrics = "instructions-downloader-metrics"
    /// The same two on the curl transport, whose downloads cost a third as many instructions: the metrics' share
    /// is larger there.
    case instructionsDownloaderCurl = "instructions-downloader-curl"
    case instructionsDownloaderCurlMetrics = "instructions-downloader-curl-metrics"
    /// N small downloads through ImageDownloader with a directory HTTP cache (decode off), each URL twice: stored
    /// by a first downloader, then served from the cache by a second one (run under callgrind).
    case instructionsDownloaderHTTPCache = "instructions-downloader-http-cache"
    /// N small downloads through raw URLSession tasks (run under callgrind).
    case instructionsURLSession = "instructions-urlsession"
    /// N small downloads through one bare Operation each (run under callgrind).
    case instructionsOperationProbe = "instructions-operation-probe"
    /// The download section's clients, each in a fresh process so one client's threads, sessions and heap
    /// cannot cost CPU in another's measurement: N small JPEGs through ImageDownloader (decode off / on)
    /// and through raw URLSession tasks.
    case downloadDownloader = "download-downloader"
    /// As `downloadDownloader`, with `postsNotifications = false` (what the four notifications cost).
    case downloadDownloaderQuiet = "download-downloader-quiet"
    /// One bare asynchronous Operation per download (no package code): the platform's cost of the design.
    case downloadOperationProbe = "download-operation-probe"
    case downloadDownloaderDecoding = "download-downloader-decoding"
    case downloadURLSession = "download-urlsession"
    /// N downloads of the 1000² × 120-frame GIF (distinct query strings) at concurrency 8, decoded, defaults.
    case animationMemory = "animation-memory"
    /// As `animationMemory`, cycling through the GIF, APNG and WebP versions.
    case animationMemoryMixed = "animation-memory-mixed"
    /// As `animationMemory`, with the 1000² × 120-frame AVIF sequence (AVIFFixtures).
    case animationMemoryAVIF = "animation-memory-avif"

    /// Runs the workload; prints one JSON line ({"failures": n, "seconds": s, "cpu_seconds": c}, both for
    /// the downloads alone, without process start-up) and returns the exit code.
    func run(baseURL: String, count: Int, smallAvailable: Int, smallFormat: String) -> Int32 {
        let small = max(1, smallAvailable)
        func url(_ path: String) -> URL? { URL(string: "\(baseURL)/\(path)") }
        let urls: [URL]
        switch self {
        case .memoryLarge:
            urls = (0..<count).compactMap { url("large-baseline.jpg?m=\($0)") }
        case .memoryMany, .instructionsDownloader, .instructionsDownloaderQuiet, .instructionsDownloaderMetrics, .instructionsURLSession,
             .instructionsOperationProbe, .instructionsDownloaderCurl, .instructionsDownloaderCurlMetrics, .instructionsDownloaderHTTPCache:
            urls = (0..<count).compactMap { url(Fixtures.smallPath($0 % small, format: "jpg") + "?n=\($0)") }
        case .memoryManyDecoded:
            urls = (0..<count).compactMap { url(Fixtures.smallPath($0 % small, format: smallFormat) + "?n=\($0)") }
        case .downloadDownloader, .downloadDownloaderQuiet, .downloadOperationProbe, .downloadURLSession:
            urls = (0..<count).compactMap { url(Fixtures.smallPath($0 % small, format: "jpg")) }
        case .downloadDownloaderDecoding:
            urls = (0..<count).compactMap { url(Fixtures.smallPath($0 % small, format: smallFormat)) }
        case .animationMemory:
            urls = (0..<count).compactMap { url(AnimationFixtures.path(format: "gif") + "?n=\($0)") }
        case .animationMemoryMixed:
            let formats = AnimationFixtures.formats
            urls = (0..<count).compactMap { url(AnimationFixtures.path(format: formats[$0 % formats.count]) + "?n=\($0)") }
        case .animationMemoryAVIF:
            urls = (0..<count).compactMap { url(AVIFFixtures.sequencePath + "?n=\($0)") }
        }
        guard urls.count == count else {
            print("{\"error\": \"bad base URL\"}")
            return 2
        }
        let start = Clock.wall()
        let cpuStart = Clock.processCPU()
        let failures: Int?
        var firstError: String?
        switch self {
        case .memoryLarge:
            let outcome = DownloaderClient.download(urls, options: [.scaleDownLargeImages])
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .memoryMany, .instructionsDownloader, .downloadDownloader:
            let outcome = DownloaderClient.download(urls, options: [.avoidDecodeImage])
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .instructionsDownloaderMetrics, .instructionsDownloaderCurl, .instructionsDownloaderCurlMetrics:
            let sink = self == .instructionsDownloaderCurl ? nil : PrometheusMetrics()
            let outcome = DownloaderClient.download(urls, options: [.avoidDecodeImage]) { configuration in
                configuration.metricsSink = sink
                if self != .instructionsDownloaderMetrics { configuration.transport = .curl }
            }
            // Every download counted (not rendered: a scrape is no part of a download, and the text's building cost
            // varies with the heap between the two runs the difference is taken of).
            let counted = sink.map { Int($0.total(ImageDownloaderMetricName.downloads)) } ?? urls.count
            failures = outcome.map { $0.failures + (counted == urls.count ? 0 : 1) }
            firstError = outcome?.firstError
        case .downloadDownloaderQuiet, .instructionsDownloaderQuiet:
            let outcome = DownloaderClient.download(urls, options: [.avoidDecodeImage], postsNotifications: false)
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .instructionsDownloaderHTTPCache:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("od-bench-http-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let cache = HTTPImageCache(directory: folder)
            var outcome: DownloaderClient.Outcome?
            // The first pass stores every response, the second is served from the cache (max-stale: a response
            // the server sent without Cache-Control is served whatever its heuristic freshness).
            for _ in 0..<2 where outcome == nil || outcome?.failures == 0 {
                outcome = DownloaderClient.download(urls, options: [.avoidDecodeImage, .useURLCache],
                                                    headers: ["Cache-Control": "max-stale=86400"]) { $0.httpCache = cache }
            }
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .animationMemory, .animationMemoryMixed, .animationMemoryAVIF:
            let outcome = DownloaderClient.download(urls, options: [], concurrency: 8)
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .memoryManyDecoded, .downloadDownloaderDecoding:
            let outcome = DownloaderClient.download(urls, options: [])
            failures = outcome?.failures
            firstError = outcome?.firstError
        case .instructionsURLSession, .downloadURLSession:
            failures = RawURLSessionClient().download(urls, concurrency: 6)
        case .downloadOperationProbe, .instructionsOperationProbe:
            failures = OperationProbeClient().download(urls, concurrency: 6)
        }
        return ChildWorkload.report(failures: failures, firstError: firstError, start: start, cpuStart: cpuStart)
    }

    /// The one JSON line every child workload prints after its downloads (the sections parse it), and the exit
    /// code: 3 when the client timed out (`failures` nil), 1 with failures, 0 when every download succeeded.
    static func report(failures: Int?, firstError: String?, start: Double, cpuStart: Double) -> Int32 {
        let seconds = Clock.wall() - start
        let cpuSeconds = Clock.processCPU() - cpuStart
        guard let failures else {
            print("{\"error\": \"timed out\"}")
            return 3
        }
        let detail = firstError.map { ", \"first_error\": \(JSONValue.string($0).serialized())" } ?? ""
        print("{\"failures\": \(failures), \"seconds\": \(seconds), \"cpu_seconds\": \(cpuSeconds)\(detail)}")
        return failures == 0 ? 0 : 1
    }
}

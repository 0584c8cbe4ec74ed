import Decoding
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OperationDownloader

/// How a finished download fills its record: what `--json`, the lines and the summary report (issue 37: attempts
/// are requests sent, the status and figures are the last request's, and where the answer came from is named).
extension DownloadRecord {
    /// A success. `observed`: the operation's metrics at its last `imageDownloadStop`; `lastResponse`: the last
    /// response the response modifier saw (for the status when the result carries none).
    mutating func finish(with loaded: ImageTargetResult, observed: ImageDownloadMetrics?, lastResponse: HTTPURLResponse? = nil) {
        let image = loaded.image
        let metrics = loaded.metrics
        state = .succeeded
        format = image.format
        width = image.width
        height = image.height
        frames = image.frameCount
        bytes = loaded.data?.count
        self.image = image
        incomplete = image.isIncomplete
        waitedForSharedFetch = metrics?.waitedForSharedFetch ?? false
        guard loaded.source != .memoryCache else {
            source = .memoryCache
            cacheResult = .memory
            attempts = 0
            return
        }
        // The last request's status, or the stored response's for an answer of the HTTP cache.
        httpStatus = metrics?.statusCode ?? (loaded.response ?? lastResponse)?.statusCode
        source = metrics?.source ?? .network
        cacheResult = metrics.flatMap(Self.cacheResult)
        network = metrics.map(NetworkSummary.init)
        attempts = metrics?.attemptCount ?? observed?.attemptCount ?? 1
        resumedFrom = metrics?.resumedFromByte
    }

    /// A failure (or a cancel). `observed` as for `finish`: a failure delivered through the image-target API
    /// carries only its error.
    mutating func fail(with error: any Error, cancelled: Bool, observed: ImageDownloadMetrics?, mimeType: String?) {
        state = cancelled ? .cancelled : .failed
        // The last request's status and figures (each attempt's stop reports them): nil when it got no response,
        // never an earlier attempt's.
        httpStatus = observed?.statusCode
        network = observed.map(NetworkSummary.init)
        attempts = observed?.attemptCount ?? 0
        resumedFrom = observed?.resumedFromByte
        if let observed, observed.source != .network {  // a stored error status, answered without a request
            source = observed.source
            cacheResult = Self.cacheResult(observed)
        }
        let message = ErrorMessages.describe(error, mimeType: mimeType)
        let count = attempts ?? 0
        self.error = count > 1 && !cancelled ? "\(message) (after \(count) attempts)" : message
    }

    /// Where the HTTP cache answered from without transferring the body (fresh, stale, or revalidated by a 304);
    /// nil when the server sent it.
    static func cacheResult(_ metrics: ImageDownloadMetrics) -> CacheResult? {
        switch metrics.source {
        case .httpCache: return metrics.servedStale ? .stale : .hit
        case .revalidatedHTTPCache: return .revalidated
        case .memoryCache: return .memory
        case .network: return nil
        }
    }
}

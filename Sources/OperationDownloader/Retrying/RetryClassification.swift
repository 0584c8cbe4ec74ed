import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which failures a retry policy may retry (Docs/Options.md).
///
/// Retried: connection refused, reset or lost, DNS failures, timeouts, and HTTP 408, 429, 500, 502, 503, 504.
/// Never retried: every other status, bad image data, too-large bodies, TLS failures, cancellation, and any
/// error this type does not know. A connection cut short is `.networkConnectionLost` on every transport
/// (`ConnectionLoss`: corelibs' -1 for a cut body is turned into it); any other -1 is never retried.
enum RetryClassification {
    /// HTTP statuses worth another attempt: timeouts, rate limiting and temporary server or gateway trouble.
    static let retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Transport failures worth another attempt.
    static let retryableURLErrorCodes: Set<URLError.Code> = [
        .timedOut,               // -1001: idle timeout, maximumDownloadDuration, connect timeout
        .cannotFindHost,         // -1003: DNS answered no such host (often transient in containers)
        .cannotConnectToHost,    // -1004: connection refused
        .networkConnectionLost,  // -1005: connection reset or lost mid-transfer
        .dnsLookupFailed,        // -1006: DNS did not answer
    ]

    /// Whether `error`, the failure of one attempt, may be retried.
    static func isRetryable(_ error: any Error) -> Bool {
        switch error {
        case let error as ImageDownloaderError:
            switch error {
            case .invalidDownloadStatusCode(let status): return retryableStatusCodes.contains(status)
            case .network(let urlError): return retryableURLErrorCodes.contains(urlError.code)
            case .invalidURL, .badImageData, .cacheNotModified, .notModified, .invalidDownloadOperation,
                 .invalidDownloadContentType, .invalidDownloadResponse, .responseTooLarge, .cancelled,
                 .unsupportedOnPlatform:
                return false
            }
        case let error as URLError:
            return retryableURLErrorCodes.contains(error.code)
        default:
            // corelibs may hand out a bare NSError in NSURLErrorDomain.
            let nsError = error as NSError
            guard nsError.domain == NSURLErrorDomain, let code = URLError.Code(rawValue: nsError.code) else { return false }
            return retryableURLErrorCodes.contains(code)
        }
    }
}

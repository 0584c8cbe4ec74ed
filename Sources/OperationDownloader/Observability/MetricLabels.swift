import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The label values the package reports: each from a small fixed set (or, for `server_address`, bounded by
/// `ImageDownloaderConfiguration.metricsServerAddressLimit`), never a URL.
enum MetricLabels {
    /// OpenTelemetry's `error.type` for a failed request or download: the status code for an HTTP status error
    /// (as the HTTP conventions ask), a snake-case name for a network error or a package error, `_OTHER` for
    /// anything else.
    static func errorType(_ error: any Error) -> String {
        switch error {
        case let error as ImageDownloaderError:
            switch error {
            case .invalidURL: return "invalid_url"
            case .badImageData: return "bad_image_data"
            case .cacheNotModified: return "cache_not_modified"
            case .notModified: return "not_modified"
            case .invalidDownloadOperation: return "invalid_download_operation"
            case .invalidDownloadStatusCode(let status): return String(status)
            case .invalidDownloadContentType: return "invalid_content_type"
            case .invalidDownloadResponse: return "invalid_response"
            case .responseTooLarge: return "response_too_large"
            case .cancelled: return "cancelled"
            case .unsupportedOnPlatform: return "unsupported_on_platform"
            case .network(let urlError): return urlErrorType(urlError.code)
            }
        case let error as URLError:
            return urlErrorType(error.code)
        case is CancellationError:
            return "cancelled"
        default:
            let nsError = error as NSError
            if nsError.domain == NSURLErrorDomain, let code = URLError.Code(rawValue: nsError.code) { return urlErrorType(code) }
            return "_OTHER"
        }
    }

    /// `error_type` of a request that ended with `error`: transport failures (network errors, timeouts, a
    /// cancel, a body over the size limit) and rejected statuses; nil for the package's own verdicts on a
    /// complete response (not an image, a 304 to the caller's validators...), where the status alone counts.
    static func requestErrorType(_ error: any Error) -> String? {
        if let error = error as? ImageDownloaderError {
            switch error {
            case .network, .cancelled, .responseTooLarge, .invalidDownloadStatusCode: break
            default: return nil
            }
        }
        return errorType(error)
    }

    /// The network errors the package tells apart; any other code is `url_error`.
    static func urlErrorType(_ code: URLError.Code) -> String {
        switch code {
        case .timedOut: "timeout"
        case .cannotFindHost, .dnsLookupFailed: "dns"
        case .cannotConnectToHost: "connection_refused"
        case .networkConnectionLost: "connection_lost"
        case .notConnectedToInternet: "not_connected"
        case .cancelled: "cancelled"
        case .httpTooManyRedirects: "too_many_redirects"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
             .clientCertificateRequired: "tls"
        case .dataLengthExceedsMaximum: "response_too_large"
        case .badServerResponse: "bad_server_response"
        case .userAuthenticationRequired, .userCancelledAuthentication: "authentication"
        default: "url_error"
        }
    }

    /// `od_download_retries_total`'s `reason`: the failure a retry follows (`status_503`, `timeout`, ...).
    static func retryReason(_ error: any Error) -> String {
        let type = errorType(error)
        return type.first?.isNumber == true ? "status_" + type : type
    }


    /// `result` of `od_http_cache_lookups_total` for a download that used the HTTP cache: `hit` (fresh),
    /// `stale` (served stale: stale-while-revalidate, stale-if-error, max-stale), `revalidated` (a 304), `miss`
    /// (the server sent the body: nothing stored, or the stored response changed).
    static func lookupResult(_ source: ImageDownloadMetrics.Source, servedStale: Bool) -> String {
        switch source {
        case .httpCache: servedStale ? "stale" : "hit"
        // (An answer from the memory cache of decoded images has no operation and reads no HTTP cache.)
        case .memoryCache: "hit"
        case .revalidatedHTTPCache: "revalidated"
        case .network: "miss"
        }
    }

    /// `format` of `od_decode_duration_seconds`.
    static func format(_ format: ImageFormat) -> String {
        format.rawValue
    }

    /// `network_protocol_version` from a transport's HTTP version ("1.1", "2"); nil when unknown.
    static func protocolVersion(_ version: String?) -> String? {
        guard let version, !version.isEmpty else { return nil }
        return version.hasPrefix("HTTP/") ? String(version.dropFirst(5)) : version
    }
}

/// `result` of `od_downloads_total`.
enum DownloadResult: Int, CaseIterable, Sendable {
    case success, failure, cancelled

    init(_ error: (any Error)?) {
        guard let error else {
            self = .success
            return
        }
        self = MetricLabels.errorType(error) == "cancelled" ? .cancelled : .failure
    }

    var label: String {
        switch self {
        case .success: "success"
        case .failure: "failure"
        case .cancelled: "cancelled"
        }
    }
}

/// `source` of `od_downloads_total` and `od_download_duration_seconds`.
enum DownloadSource: Int, CaseIterable, Sendable {
    case network, httpCache, revalidatedHTTPCache, memoryCache

    init(_ source: ImageDownloadMetrics.Source) {
        switch source {
        case .network: self = .network
        case .httpCache: self = .httpCache
        case .revalidatedHTTPCache: self = .revalidatedHTTPCache
        case .memoryCache: self = .memoryCache
        }
    }

    var label: String {
        switch self {
        case .network: "network"
        case .httpCache: "http_cache"
        case .revalidatedHTTPCache: "revalidated_http_cache"
        case .memoryCache: "memory_cache"
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport failure in plain words: the description of `ImageDownloaderError.network` (and so what
/// `imagedl` prints). Foundation's own text for most codes on Linux is "The operation could not be completed.
/// (NSURLErrorDomain error -1007.)"; this says "too many redirects (20)" instead.
///
/// The words come from the code; the transport's own explanation (libcurl's message, the operation's timeout
/// text) follows where it adds something, so "connection refused" stays short but a TLS failure says why.
enum NetworkErrorText {
    /// Keys of the `URLError.userInfo` the package fills in for its own failures.
    enum UserInfoKey {
        /// `Int`: redirects followed before the download gave up (`.httpTooManyRedirects`).
        static let redirectCount = "OperationDownloaderRedirectCount"
    }

    static func describe(_ error: URLError) -> String {
        let words = plainWords(error)
        guard let detail = detail(of: error), shouldAppendDetail(error.code) else { return words }
        return "\(words) (\(detail))"
    }

    /// The code in a few words; "network error N" for a code Foundation may add later.
    static func plainWords(_ error: URLError) -> String {
        switch error.code {
        case .timedOut:
            return detail(of: error).map { "timed out: \($0)" } ?? "timed out"
        case .httpTooManyRedirects:
            let count = error.userInfo[UserInfoKey.redirectCount] as? Int
            if let count { return "too many redirects (\(count))" }
            return detail(of: error).map { "too many redirects (\($0))" } ?? "too many redirects"
        case .cannotConnectToHost: return "connection refused"
        case .cannotFindHost: return "host not found"
        case .dnsLookupFailed: return "DNS lookup failed"
        case .networkConnectionLost: return "connection lost"
        case .notConnectedToInternet: return "not connected to the internet"
        case .internationalRoamingOff, .callIsActive, .dataNotAllowed: return "the network is not available"
        case .cancelled: return "cancelled"
        case .badURL: return "bad URL"
        case .unsupportedURL: return "unsupported URL"
        case .badServerResponse: return "bad server response (not HTTP, or broken framing)"
        case .cannotParseResponse: return "cannot parse the server's response"
        case .zeroByteResource: return "empty response"
        case .cannotDecodeContentData: return "cannot decode the content encoding (gzip, deflate, br)"
        case .cannotDecodeRawData: return "cannot decode the response data"
        case .dataLengthExceedsMaximum: return "response larger than the limit"
        case .resourceUnavailable: return "resource unavailable"
        case .redirectToNonExistentLocation: return "redirect to a location that does not exist"
        case .userAuthenticationRequired: return "authentication required"
        case .userCancelledAuthentication: return "authentication cancelled"
        case .secureConnectionFailed: return "TLS handshake failed"
        case .serverCertificateHasBadDate: return "the server's certificate has expired"
        case .serverCertificateNotYetValid: return "the server's certificate is not yet valid"
        case .serverCertificateUntrusted: return "the server's certificate is not trusted"
        case .serverCertificateHasUnknownRoot: return "the server's certificate has an unknown root (self-signed?)"
        case .clientCertificateRejected: return "the server rejected the client certificate"
        case .clientCertificateRequired: return "the server requires a client certificate"
        case .appTransportSecurityRequiresSecureConnection: return "a secure connection (https) is required"
        case .fileDoesNotExist: return "file does not exist"
        case .fileIsDirectory: return "is a directory"
        case .noPermissionsToReadFile: return "no permission to read the file"
        case .cannotLoadFromNetwork: return "cannot load from the network (cache only)"
        case .backgroundSessionWasDisconnected: return "the background session was disconnected"
        case .unknown: return "network error"
        default: return "network error \(error.code.rawValue)"
        }
    }

    /// The transport's own explanation: an explicit localized description (libcurl's message, the operation's),
    /// never Foundation's generic "The operation could not be completed" text.
    static func detail(of error: URLError) -> String? {
        guard let text = error.userInfo[NSLocalizedDescriptionKey] as? String else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, !trimmed.hasPrefix("The operation could not be completed") else { return nil }
        return trimmed
    }

    /// Codes whose words alone leave the reader guessing (TLS, malformed replies, unknown failures); the
    /// others are clear without libcurl's sentence (which repeats the host and port).
    private static func shouldAppendDetail(_ code: URLError.Code) -> Bool {
        switch code {
        case .timedOut, .httpTooManyRedirects, .cannotConnectToHost, .cannotFindHost, .cancelled,
             .notConnectedToInternet:
            return false
        default:
            return true
        }
    }
}

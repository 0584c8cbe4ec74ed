import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// libcurl's result codes as the `URLError`s the rest of the package (retry policy, error reports) expects.
///
/// Closer to Apple's URLSession than corelibs Foundation is (which reports -1 for most failures): a body
/// cut short (a FIN, an RST, an HTTP/2 stream reset, a TLS close without close_notify) is
/// `.networkConnectionLost`, a reply that is not HTTP `.badServerResponse`, a TLS failure its certificate code. The message is libcurl's own ("transfer closed with 69522 bytes remaining to read").
enum CurlErrorMapping {
    /// What the curl thread knows about a failed request.
    struct Failure {
        var code: Int
        /// libcurl's CURLOPT_ERRORBUFFER text (may be empty).
        var message: String
        /// CURLINFO_OS_ERRNO: the socket error behind a connect/recv/send failure (0 when none).
        var osErrno: Int32
        /// CURLINFO_SSL_VERIFYRESULT: OpenSSL's X509 verification result (0 = ok).
        var verifyResult: Int
        var url: URL
    }

    // OpenSSL's X509_V_ERR_* values (openssl/x509_vfy.h) libcurl reports in CURLINFO_SSL_VERIFYRESULT.
    private static let certificateNotYetValid = 9
    private static let certificateExpired = 10
    private static let unknownRootResults: Set<Int> = [
        18,  // X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        19,  // X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
        20,  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        21,  // X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE
        2,   // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
    ]

    static func urlError(_ failure: Failure) -> URLError {
        let code = urlErrorCode(failure)
        var message = failure.message
        if message.isEmpty, let text = ccurl_easy_strerror(Int32(truncatingIfNeeded: failure.code)) { message = String(cString: text) }
        if failure.code == CCURLE_PEER_FAILED_VERIFICATION || failure.code == CCURLE_SSL_PINNEDPUBKEYNOTMATCH {
            message = "TLS: the server's certificate is not trusted (\(message)); see ImageDownloaderConfiguration.tls"
        }
        return urlError(code, message, url: failure.url)
    }

    static func urlError(_ code: URLError.Code, _ message: String, url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return URLError(code, userInfo: info)
    }

    private static func urlErrorCode(_ failure: Failure) -> URLError.Code {
        let lostConnection: Set<Int32> = [ECONNRESET, ECONNABORTED, EPIPE, ENETRESET, ENOTCONN]
        switch failure.code {
        case CCURLE_COULDNT_RESOLVE_HOST, CCURLE_COULDNT_RESOLVE_PROXY:
            return .cannotFindHost
        case CCURLE_COULDNT_CONNECT:
            return failure.osErrno == ETIMEDOUT ? .timedOut : .cannotConnectToHost
        case CCURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case CCURLE_URL_MALFORMAT:
            return .badURL
        case CCURLE_UNSUPPORTED_PROTOCOL, CCURLE_WEIRD_SERVER_REPLY:
            // Schemes are checked before libcurl sees a URL, so this is a reply that is not HTTP
            // ("Received HTTP/0.9 when not allowed").
            return .badServerResponse
        case CCURLE_GOT_NOTHING, CCURLE_PARTIAL_FILE, CCURLE_HTTP2, CCURLE_HTTP2_STREAM:
            // The server closed the connection (or reset the stream) before the response was complete.
            return .networkConnectionLost
        case CCURLE_SEND_ERROR, CCURLE_RECV_ERROR:
            if lostConnection.contains(failure.osErrno) { return .networkConnectionLost }
            if failure.osErrno == ETIMEDOUT { return .timedOut }
            // A TLS connection closed without close_notify (OpenSSL 3: "unexpected eof while reading").
            let message = failure.message.lowercased()
            if message.contains("unexpected eof") || message.contains("ssl_read") { return .networkConnectionLost }
            // Without a socket error the bytes were unreadable: chunked framing broken, and the like.
            return failure.osErrno == 0 ? .badServerResponse : .networkConnectionLost
        case CCURLE_BAD_CONTENT_ENCODING:
            return .cannotDecodeContentData
        case CCURLE_FILESIZE_EXCEEDED:
            return .dataLengthExceedsMaximum
        case CCURLE_TOO_MANY_REDIRECTS:
            return .httpTooManyRedirects
        case CCURLE_PEER_FAILED_VERIFICATION:
            if failure.verifyResult == certificateExpired { return .serverCertificateHasBadDate }
            if failure.verifyResult == certificateNotYetValid { return .serverCertificateNotYetValid }
            if unknownRootResults.contains(failure.verifyResult) { return .serverCertificateHasUnknownRoot }
            // A name mismatch (libcurl checks the host itself) and everything else.
            return .serverCertificateUntrusted
        case CCURLE_SSL_PINNEDPUBKEYNOTMATCH, CCURLE_SSL_ISSUER_ERROR, CCURLE_SSL_INVALIDCERTSTATUS:
            return .serverCertificateUntrusted
        case CCURLE_SSL_CLIENTCERT:
            return .clientCertificateRequired
        case CCURLE_SSL_CONNECT_ERROR, CCURLE_SSL_CIPHER, CCURLE_SSL_CERTPROBLEM, CCURLE_SSL_CACERT_BADFILE,
             CCURLE_SSL_CRL_BADFILE, CCURLE_SSL_SHUTDOWN_FAILED:
            return .secureConnectionFailed
        case CCURLE_PROXY:
            return .cannotConnectToHost
        default:
            return .unknown
        }
    }
}

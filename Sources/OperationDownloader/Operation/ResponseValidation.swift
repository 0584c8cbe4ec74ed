import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether a response (after the response modifier) is one to receive: status, content type, announced size.
struct ResponseValidation {
    /// nil: 200..<300.
    let acceptableStatusCodes: IndexSet?
    /// Lower-cased MIME types, "image/*" style wildcards allowed; nil accepts any.
    let acceptableContentTypes: Set<String>?
    let maximumResponseSize: Int

    enum Verdict {
        /// Receive the body; `expectedSize` is the announced length, or -1 (unknown, or gzip: the announced
        /// length is the compressed one, so progress clamps to what arrives).
        case accept(expectedSize: Int)
        /// A 401 the transport will retry with a credential (on Linux the challenge follows the response):
        /// keep the response, drop its body.
        case awaitAuthenticationRetry
        /// End the download with this error and cancel the transfer.
        case reject(ImageDownloaderError)
    }

    /// - Parameter mayRetryAuthentication: a credential is ready for a first challenge from the same origin.
    /// Reads the transport's own fields: no Foundation response is made for it.
    func verdict(for response: TransportResponse, mayRetryAuthentication: Bool) -> Verdict {
        if let status = response.statusCode {
            if status == 304 { return .reject(.notModified) }
            if !isAcceptable(status: status) {
                if status == 401, mayRetryAuthentication { return .awaitAuthenticationRetry }
                return .reject(.invalidDownloadStatusCode(status))
            }
        }
        if !isAcceptable(mimeType: response.mimeType) { return .reject(.invalidDownloadContentType(response.mimeType)) }
        let announced = response.expectedContentLength
        if announced > 0, announced > Int64(maximumResponseSize) {
            return .reject(.responseTooLarge(Int(clamping: announced)))
        }
        return .accept(expectedSize: announced > 0 ? Int(clamping: announced) : -1)
    }

    func isAcceptable(status: Int) -> Bool {
        Self.isAcceptable(status: status, codes: acceptableStatusCodes)
    }

    /// `codes` nil: 200..<300.
    static func isAcceptable(status: Int, codes: IndexSet?) -> Bool {
        if let codes { return codes.contains(status) }
        return (200..<300).contains(status)
    }

    func isAcceptable(mimeType: String?) -> Bool {
        guard let accepted = acceptableContentTypes else { return true }
        guard let mime = mimeType?.lowercased() else { return false }
        if accepted.contains(mime) { return true }
        guard let slash = mime.firstIndex(of: "/") else { return false }
        return accepted.contains(mime[..<slash] + "/*") || accepted.contains("*/*")
    }
}

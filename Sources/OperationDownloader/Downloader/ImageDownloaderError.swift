import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a download did not produce an image. Every completion handler receives one of these as its error.
public enum ImageDownloaderError: Error, Sendable {
    /// The URL was nil, or not an http(s)/data URL the session can load.
    case invalidURL
    /// The body was empty, not an image, or decoded to zero pixels; the message says which.
    case badImageData(String)
    /// `.ignoreCachedResponse` was set and the server sent the bytes already cached.
    case cacheNotModified
    /// HTTP 304 Not Modified.
    case notModified
    /// No operation could be created: the request modifier returned nil, or the downloader was invalidated.
    case invalidDownloadOperation
    /// The HTTP status code is not acceptable (by default: anything outside 200..<300).
    case invalidDownloadStatusCode(Int)
    /// The response's MIME type is not in `acceptableContentTypes`.
    case invalidDownloadContentType(String?)
    /// The response modifier returned nil, or the response was not a usable HTTP response.
    case invalidDownloadResponse
    /// The body exceeded `maximumResponseSize` (the size announced or reached).
    case responseTooLarge(Int)
    /// This caller cancelled (its token, `cancelAllDownloads`, or `invalidate`).
    case cancelled
    /// The request needs something this platform cannot do (for example accepting an invalid certificate on Linux).
    case unsupportedOnPlatform(String)
    /// A transport failure: timeout, reset, refused connection, too many redirects...
    case network(URLError)
}

extension ImageDownloaderError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidURL: return "invalid URL"
        case .badImageData(let why): return "bad image data: \(why)"
        case .cacheNotModified: return "downloaded data equals the cached data"
        case .notModified: return "HTTP 304 not modified"
        case .invalidDownloadOperation: return "the download operation could not be created"
        case .invalidDownloadStatusCode(let code): return "unacceptable HTTP status \(code)"
        case .invalidDownloadContentType(let type): return "unacceptable content type \(type ?? "(none)")"
        case .invalidDownloadResponse: return "invalid response"
        case .responseTooLarge(let size): return "response larger than the limit (\(size) bytes)"
        case .cancelled: return "cancelled"
        case .unsupportedOnPlatform(let why): return "unsupported on this platform: \(why)"
        case .network(let error): return "network error \(error.code.rawValue): \(error.localizedDescription)"
        }
    }
}

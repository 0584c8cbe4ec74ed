import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a download did not produce an image. Every completion handler receives one of these as its error.
public enum ImageDownloaderError: Error, Sendable {
    /// The URL was nil, or not an http(s)/data URL the transport can load (also when a request modifier
    /// returned a request without one).
    case invalidURL
    /// The bytes are not a usable image (SDWebImage's `SDWebImageErrorBadImageData`); the reason says why:
    /// an empty body, not an image (HTML, JSON, text, zeros: detected from its first bytes, and the transfer
    /// cancelled), truncated, zero pixels, the decoder's `ImageDecodingError`, the transformer's or the
    /// decryptor's failure. A codec library missing from the system is `.unsupportedOnPlatform` instead.
    case badImageData(BadImageDataReason)
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
    /// The request needs something this platform cannot do: accepting an invalid certificate or loading an IPv6
    /// literal host with URLSession on Linux, a codec library that is not installed (the message names it), a
    /// transport that cannot be loaded.
    case unsupportedOnPlatform(String)
    /// A transport failure: timeout, reset, refused connection, too many redirects... Described in plain
    /// words ("connection refused", "too many redirects (20)"); the code is the `URLError`'s.
    case network(URLError)
}

extension ImageDownloaderError {
    /// The reason of a `.badImageData`, else nil: `if let reason = error.badImageDataReason { ... }`.
    public var badImageDataReason: BadImageDataReason? {
        if case .badImageData(let reason) = self { return reason }
        return nil
    }
}

extension ImageDownloaderError: CustomStringConvertible, LocalizedError {
    public var errorDescription: String? { description }

    public var description: String {
        switch self {
        case .invalidURL: return "invalid URL (none, or not an http, https or data: URL)"
        case .badImageData(let reason): return "bad image data: \(reason)"
        case .cacheNotModified: return "downloaded data equals the cached data"
        case .notModified: return "HTTP 304 not modified"
        case .invalidDownloadOperation:
            return "no download operation could be created (the request modifier returned nil, or the downloader was invalidated)"
        case .invalidDownloadStatusCode(let code):
            return "unacceptable HTTP status \(code) (\(HTTPURLResponse.localizedString(forStatusCode: code)))"
        case .invalidDownloadContentType(let type): return "unacceptable content type \(type ?? "(none)")"
        case .invalidDownloadResponse: return "invalid response (the response modifier returned nil)"
        case .responseTooLarge(let size): return "response too large: \(size) bytes, more than maximumResponseSize"
        case .cancelled: return "cancelled"
        case .unsupportedOnPlatform(let why): return "unsupported on this platform: \(why)"
        case .network(let error): return NetworkErrorText.describe(error)
        }
    }
}

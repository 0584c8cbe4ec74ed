import Decoding
import Foundation
import OperationDownloader
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One short line per failure, the same in every command (`imagedl URL...`, `thumbnail` for files and URLs,
/// `decode`) and in `--json`'s "error": "HTTP 404 Not Found", "connection refused", "too many redirects (20)",
/// "timed out: no data for 15 s", "not an image: the server sent text/html", "truncated: the data (4096 bytes)
/// ends before the image is complete (--allow-incomplete keeps the decoded part)".
///
/// Every command hands its failure here as the library's typed error: a download's as it comes, a file's
/// decode failure through `ImageDownloaderError.forDecodingFailure` and `forIncompleteImage`, so that one failure
/// has one wording. Transport failures are worded by the library (`ImageDownloaderError.network`'s description).
enum ErrorMessages {
    /// `mimeType`: the response's, when there was one (an error page served with status 200 says so).
    static func describe(_ error: any Error, mimeType: String? = nil) -> String {
        switch error {
        case let error as ImageDownloaderError:
            return describe(error, mimeType: mimeType)
        case let error as URLError:
            return describe(ImageDownloaderError.network(error))
        case let error as ImageDecodingError where error == .unsupportedFormat:
            return "not an image this build can decode"  // without the bytes, nothing more can be said
        case let error as ImageDecodingError:
            // A decoder's error without the bytes it failed on: as the download would word it.
            return describe(ImageDownloaderError.forDecodingFailure(error, data: Data()), mimeType: mimeType)
        case let error as any CustomStringConvertible:
            return error.description
        default:
            return String(describing: error)
        }
    }

    /// The words of a file's decode failure (`imagedl decode`, `imagedl thumbnail FILE`): as a download of the same
    /// bytes would report it.
    static func describeDecoding(_ error: any Error, data: Data) -> String {
        describe(ImageDownloaderError.forDecodingFailure(error, data: data))
    }

    private static func describe(_ error: ImageDownloaderError, mimeType: String?) -> String {
        switch error {
        case .badImageData(let reason):
            if let mimeType, !mimeType.lowercased().hasPrefix("image/"), isAboutTheBytes(reason) {
                // The usual cause: an error or login page served with status 200.
                return "not an image: the server sent \(mimeType)"
            }
            switch reason {
            case .notAnImage(let what):
                return "not an image: \(what)"
            case .truncated(let count, partialImageAvailable: true):
                return "truncated: the data (\(count) bytes) ends before the image is complete "
                    + "(--allow-incomplete keeps the decoded part)"
            case .truncated(let count, partialImageAvailable: false):
                return "truncated: the data (\(count) bytes) ends before any pixel"
            case .decoding(.unsupportedFormat):
                return "no registered decoder for \(mimeType ?? "this format")"
            default:
                return error.description
            }
        case .invalidDownloadStatusCode(let code):
            return "HTTP \(code) \(HTTPURLResponse.localizedString(forStatusCode: code))"
        default:
            return error.description
        }
    }

    /// Reasons that blame the bytes themselves (not the transformer, the decryptor or an empty body).
    private static func isAboutTheBytes(_ reason: BadImageDataReason) -> Bool {
        switch reason {
        case .notAnImage, .truncated, .zeroPixels, .decoding, .coderFailed: return true
        case .emptyBody, .transformerFailed, .decryptorFailed, .noImage: return false
        }
    }
}

import Decoding
import Foundation
import OperationDownloader
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One short line per error, the same in every command's output and `--json` "error" field: "HTTP 404 Not
/// Found", "connection refused", "too many redirects (20)", "timed out: no data for 15 s", "not an image (the
/// server sent text/html)", "bad image data: truncated: ...".
///
/// Transport failures are worded by the library (`ImageDownloaderError.network`'s description), so the words
/// for each `URLError` code live in one place.
enum ErrorMessages {
    /// `mimeType`: the response's, when there was one (an error page served with status 200 says so).
    static func describe(_ error: any Error, mimeType: String? = nil) -> String {
        switch error {
        case let error as ImageDownloaderError:
            return describe(error, mimeType: mimeType)
        case let error as URLError:
            return describe(ImageDownloaderError.network(error))
        case let error as ImageDecodingError where error == .unsupportedFormat:
            return "not an image this build can decode"
        case let error as any CustomStringConvertible:
            return error.description
        default:
            return String(describing: error)
        }
    }

    private static func describe(_ error: ImageDownloaderError, mimeType: String?) -> String {
        switch error {
        case .badImageData(let reason):
            if let mimeType, !mimeType.lowercased().hasPrefix("image/"), isAboutTheBytes(reason) {
                // The usual cause: an error or login page served with status 200.
                return "not an image (the server sent \(mimeType))"
            }
            if case .decoding(.unsupportedFormat) = reason {
                return "no registered decoder for \(mimeType ?? "this format")"
            }
            return error.description
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

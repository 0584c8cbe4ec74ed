import Foundation
import Decoding

/// Why the downloaded bytes are not a usable image: the typed cause inside
/// `ImageDownloaderError.badImageData` (the model is Kingfisher's nested reason enums).
///
/// One case per concept, whoever found it: a truncation is `.truncated` whether the operation saw a partial
/// image or the decoder threw `ImageDecodingError.truncated`, and zero pixels are `.zeroPixels` whether the
/// header declared them or the image came out empty. Every other decoder failure is `.decoding`, with the
/// decoder's own error (new `ImageDecodingError` cases arrive there as they are added). A codec library missing
/// from the system is not bad data: that is `ImageDownloaderError.unsupportedOnPlatform`.
public enum BadImageDataReason: Sendable {
    /// The response had no body (0 bytes).
    case emptyBody
    /// The body is something other than an image, as its first bytes show: "an HTML page", "JSON", "text",
    /// "4096 zero bytes", or "unknown binary data (it starts with 00 11 22 ...)" when no image signature and
    /// no registered coder recognises it.
    case notAnImage(String)
    /// The data ends before the image is complete. `receivedBytes`: the bytes decoded.
    /// `partialImageAvailable`: the decoder produced part of the image (set `allowsIncompleteImages` to receive
    /// it marked `isIncomplete`); false when the data ends before any pixel.
    case truncated(receivedBytes: Int, partialImageAvailable: Bool)
    /// The image has zero width or height (declared in its header, or as decoded).
    case zeroPixels
    /// The decoder failed: corrupt data, more pixels than `maximumPixelCount`, an image format no registered
    /// coder decodes (`.unsupportedFormat`), or any other `ImageDecodingError`.
    case decoding(ImageDecodingError)
    /// A custom coder threw an error of its own type: kept as it was thrown.
    case coderFailed(any Error)
    /// The caller's transformer (`ImageDownloaderContext.transformer`) threw `error`; only that caller fails.
    case transformerFailed(key: String, error: any Error)
    /// The decryptor (`ImageDownloaderDecryptor`) returned nil or no bytes.
    case decryptorFailed
    /// The download ended with neither an image nor an error (a custom operation class that delivered none).
    case noImage
}

extension BadImageDataReason {
    /// The decoder's error for this reason: `.decoding`'s own, and the `ImageDecodingError` that says the same as
    /// `.zeroPixels` and as a `.truncated` without any pixel; nil for the others.
    public var decodingError: ImageDecodingError? {
        switch self {
        case .decoding(let error): return error
        case .zeroPixels: return .zeroPixels
        case .truncated(_, partialImageAvailable: false): return .truncated
        default: return nil
        }
    }

    /// The error someone else threw: the decoder's, a custom coder's, or the transformer's; nil for the reasons
    /// the downloader found itself.
    public var underlyingError: (any Error)? {
        switch self {
        case .decoding(let error): return error
        case .coderFailed(let error): return error
        case .transformerFailed(_, let error): return error
        default: return nil
        }
    }

    /// The reason for an error a decoder threw on `data` (`ImageCodersManager.decode` or an incremental
    /// decoder's final append): the decoder's truncation and zero pixels as their own cases, an
    /// `ImageDecodingError` kept whole, another error type as `.coderFailed`.
    static func decoderThrew(_ error: any Error, receivedBytes: Int) -> BadImageDataReason {
        guard let decodingError = error as? ImageDecodingError else { return .coderFailed(error) }
        if decodingError == .truncated { return .truncated(receivedBytes: receivedBytes, partialImageAvailable: false) }
        if decodingError == .zeroPixels { return .zeroPixels }
        return .decoding(decodingError)
    }
}

extension BadImageDataReason: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .emptyBody:
            return "the response body is empty"
        case .notAnImage(let what):
            return "not an image: the body is \(what)"
        case .truncated(let count, partialImageAvailable: true):
            return "truncated: the data (\(count) bytes) ends before the image is complete; "
                + "set allowsIncompleteImages to receive the partial image"
        case .truncated(let count, partialImageAvailable: false):
            return "truncated: the data (\(count) bytes) ends before any pixel"
        case .zeroPixels:
            return "the image has zero width or height"
        case .decoding(let error):
            return "cannot decode the image: \(error)"
        case .coderFailed(let error):
            return "the coder failed: \(Self.describe(error))"
        case .transformerFailed(let key, let error):
            return "transformer \"\(key)\" failed: \(Self.describe(error))"
        case .decryptorFailed:
            return "the decryptor returned no data"
        case .noImage:
            return "the download produced no image"
        }
    }

    public var errorDescription: String? { description }

    /// A thrown error's own message: its `LocalizedError` text, else its description.
    static func describe(_ error: any Error) -> String {
        if let localized = error as? any LocalizedError, let text = localized.errorDescription { return text }
        return String(describing: error)
    }
}

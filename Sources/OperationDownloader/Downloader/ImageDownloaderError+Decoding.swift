import Foundation
import Decoding

extension ImageDownloaderError {
    /// The error a download reports when decoding `data` threw `error`: `.badImageData` with the decoder's typed
    /// cause (`.truncated`, `.zeroPixels`, `.decoding(...)`), `.notAnImage` saying what the bytes look like when no
    /// coder knows them, `.unsupportedOnPlatform` naming the codec library to install. For code that decodes
    /// bytes itself (a file, a cache) and wants the words and cases a download would give.
    public static func forDecodingFailure(
        _ error: any Error, data: Data, coders: ImageCodersManager = .shared
    ) -> ImageDownloaderError {
        FinalImages.downloaderError(forDecoding: error, data: data, coders: coders.coders)
    }

    /// What a download reports for `image` decoded from `data` when the data ended early (`image.isIncomplete`)
    /// and the caller did not allow incomplete images: `.badImageData(.truncated(...))`; nil for a complete image.
    public static func forIncompleteImage(_ image: DecodedImage, data: Data) -> ImageDownloaderError? {
        image.isIncomplete ? .badImageData(.truncated(receivedBytes: data.count, partialImageAvailable: true)) : nil
    }
}

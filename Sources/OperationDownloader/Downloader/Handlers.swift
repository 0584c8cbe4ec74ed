import Foundation
import Decoding

/// Called as bytes arrive: bytes so far, expected total (-1 while unknown), and the URL.
public typealias ImageDownloaderProgressHandler = @Sendable (_ receivedSize: Int, _ expectedSize: Int, _ url: URL?) -> Void

/// Called with a partial image (`finished == false`, progressive downloads only) and exactly once with
/// `finished == true`: the image and data, or the error.
public typealias ImageDownloaderCompletedHandler = @Sendable (
    _ image: DecodedImage?, _ data: Data?, _ error: (any Error)?, _ finished: Bool
) -> Void

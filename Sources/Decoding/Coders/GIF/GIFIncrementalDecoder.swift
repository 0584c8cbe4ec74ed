import Foundation

/// Feeds GIF bytes to a `GIFStreamDecoder` as they arrive. Blocks are parsed once; `currentImage()`
/// composites the frame in progress only when asked (the downloader asks at most every 0.1 s).
final class GIFIncrementalDecoder: IncrementalImageDecoder {
    private let decoder: GIFStreamDecoder

    init(options: ImageDecodingOptions) {
        decoder = GIFStreamDecoder(options: options)
    }

    func append(_ data: Data, isFinal: Bool) throws {
        try data.withUnsafeBytes { try decoder.append($0) }
        if isFinal { try decoder.finish() }
    }

    func currentImage() -> DecodedImage? {
        decoder.image()
    }
}

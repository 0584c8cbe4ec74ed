import Foundation

/// GIF 87a/89a in Swift: the first frame decoded, every other frame indexed and composited on demand with
/// the browser rules (see `GIFStreamDecoder`), NETSCAPE2.0 loop count, and incremental decoding that shows
/// the first frame while its rows arrive.
///
/// `loopCount` is the NETSCAPE2.0 value as written (0 = forever); a GIF without that block plays once (1).
/// Frame durations follow the browser rule: under 20 ms means 100 ms.
///
/// Limits: the logical screen, and each frame's extent (offset + size), must fit `maximumPixelCount`; at most
/// `maximumFrameCount` frames (`.tooManyFrames`). Frames are not added up: only one canvas is ever held while
/// compositing. A file cut short keeps the frames that arrived, the last one possibly partial (`isIncomplete`).
public struct GIFCoder: ProgressiveImageCoder {
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .gif
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let decoder = GIFStreamDecoder(options: options)
        try data.withUnsafeBytes { try decoder.append($0) }
        try decoder.finish()
        guard let image = decoder.image() else { throw ImageDecodingError.truncated }
        return image
    }

    public func canIncrementallyDecode(_ data: Data) -> Bool {
        canDecode(data)
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder {
        GIFIncrementalDecoder(options: options)
    }
}

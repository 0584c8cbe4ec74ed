import CImageCodecs
import Foundation

/// PNG and APNG through the system libpng (progressive reader for both one-shot and incremental
/// decoding), and PNG encoding through libpng's writer.
///
/// Output is RGBA8: palette, gray, low bit depths and tRNS are expanded, 16-bit samples keep their high
/// byte. iCCP, sRGB, gAMA and cHRM are read and reported (`iccProfile`, `colorState`); `ImageCodersManager`
/// converts to sRGB from them. An eXIf chunk's orientation is reported.
/// CRC errors in critical chunks fail the decode; damaged ancillary chunks are ignored.
public struct PNGCoder: ProgressiveImageCoder {
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .png
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let decoder = PNGIncrementalDecoder(options: options)
        try decoder.append(data, isFinal: true)
        guard let image = decoder.currentImage() else { throw ImageDecodingError.truncated }
        return image
    }

    public func canIncrementallyDecode(_ data: Data) -> Bool {
        canDecode(data)
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder {
        PNGIncrementalDecoder(options: options)
    }

    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .png
    }

    /// Writes `image` (its first frame) as a non-interlaced 8-bit PNG: RGB when every pixel is opaque,
    /// RGBA otherwise. `quality` is ignored (PNG is lossless).
    public func encode(_ image: DecodedImage, format: ImageFormat, quality: Double) throws -> Data {
        guard format == .png else { throw ImageDecodingError.unsupportedFormat }
        return try PNGEncoder.encode(image, level: -1)
    }
}

import CImageCodecs
import Foundation

/// JPEG through the system's libjpeg-turbo: baseline, progressive, arithmetic-coded, restart markers, every
/// chroma subsampling, grayscale, CMYK/YCCK (Adobe inverted CMYK, no colour management); lossless (SOF3) by
/// libjpeg-turbo 3.0+, or by `LosslessJPEGDecoder` where the linked libjpeg refuses it. Output uses libjpeg's
/// accurate integer IDCT with fancy upsampling, so pixels match other libjpeg-turbo decoders bit for bit.
///
/// - Thumbnails and `scaleDownLimitBytes` use libjpeg's DCT scaling (1/2, 1/4, 1/8) first, never below the
///   target size; `ImageCodersManager` then area-filters to the exact size.
/// - EXIF orientation (APP1) is reported in `DecodedImage.orientation`, not applied.
/// - A truncated file decodes as far as its data goes (libjpeg fills the rest with gray) and is marked
///   `isIncomplete`; a file that ends before any row of pixels throws `.truncated`.
/// - Incremental decoding shows rows as they arrive (baseline) or one pass per completed scan (progressive).
public struct JPEGCoder: ProgressiveImageCoder {
    /// A stateless coder; one instance can serve every thread.
    public init() {}

    /// True for data starting with a JPEG SOI marker (FF D8 FF).
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .jpeg
    }

    /// Decodes every byte of `data`; the pixel limit is enforced right after the frame header.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        // Shrink-on-load to 1/8 or less: decode only the DC coefficients when the file allows it. The pixels
        // are as stored (libjpeg's 1/8 output) and carry the embedded profile, so the manager's colour step
        // converts them like any other decode.
        if let (thumbnail, profile) = JPEGDCThumbnailDecoder.decodeWithProfile(data, options: options) {
            var image = thumbnail
            if let profile, !profile.isEmpty {
                image.iccProfile = Data(profile)
                image.colorState = .awaitingConversion
            }
            return image
        }
        do {
            return try decodeWithLibjpeg(data, options: options)
        } catch is LosslessJPEGRefused {
            return try LosslessJPEGDecoder(options: options).decode(data)
        }
    }

    private func decodeWithLibjpeg(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let jpeg = try JPEGDecompressor(maximumPixelCount: options.maximumPixelCount)
        return try data.withUnsafeBytes { bytes in
            jpeg.setBorrowedInput(bytes)
            // A final input never suspends: no header means the data ended inside it.
            guard let header = try jpeg.readHeader() else { throw ImageDecodingError.truncated }
            try options.checkDimensions(width: header.width, height: header.height)
            jpeg.configureColor(header, options: options)
            let size = try jpeg.configure(scaleDenominator: JPEGDecompressor.scaleDenominator(
                width: header.width, height: header.height, options: options))
            jpeg.fuseColorConversion(header: header, outputSize: size, options: options)
            try jpeg.start()
            let count = size.width * size.height * 4
            // Written in place by libjpeg: no zero-fill, no copy.
            let pixels = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                guard let base = buffer.baseAddress else { throw ImageDecodingError.zeroPixels }
                cic_jpeg_advise_output(base, count)
                guard try jpeg.decode(into: base),
                      jpeg.progress.rows_decoded == Int32(size.height) else {
                    throw ImageDecodingError.truncated
                }
                initialized = count
            }
            let image = jpeg.color.tag(DecodedImage(
                width: size.width, height: size.height, pixels: pixels, format: .jpeg,
                orientation: header.orientation, isIncomplete: jpeg.progress.incomplete != 0))
            return JPEGDecompressor.exactTarget(image, header: header, options: options)
        }
    }

    /// Every JPEG can be decoded incrementally (arithmetic-coded ones are buffered until the end).
    public func canIncrementallyDecode(_ data: Data) -> Bool {
        canDecode(data)
    }

    /// A decoder that continues where it stopped on each `append`; see `JPEGIncrementalDecoder`.
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder {
        JPEGIncrementalDecoder(options: options)
    }

    /// JPEG only.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .jpeg
    }

    /// Baseline JPEG, 4:2:0, `quality` 0...1 (libjpeg quality 1...100). Alpha is dropped; a non-`up`
    /// orientation is written as an EXIF APP1 segment.
    public func encode(_ image: DecodedImage, format: ImageFormat, quality: Double) throws -> Data {
        guard format == .jpeg else { throw ImageDecodingError.unsupportedFormat }
        return try JPEGEncoder.encode(image, quality: quality)
    }
}

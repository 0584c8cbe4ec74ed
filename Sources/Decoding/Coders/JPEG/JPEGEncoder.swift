import CImageCodecs
import Foundation

/// Writes RGBA8 images as JPEG through libjpeg-turbo (alpha ignored: callers flatten first).
enum JPEGEncoder {
    /// JPEG's frame header stores 16-bit sizes and libjpeg caps them at 65500.
    static let maximumDimension = 65500

    /// What libjpeg is asked to write.
    struct Settings {
        var quality: Int = 90
        var progressive = false
        var subsampling: ImageEncodingOptions.ChromaSubsampling = .yuv420
        var optimizeCoding = false
        /// Written as a minimal EXIF APP1 segment when not `.up`.
        var orientation: ImageOrientation = .up
    }

    /// The `ImageCoder.encode(_:format:quality:)` contract: baseline, 4:2:0, orientation kept as an EXIF tag.
    static func encode(_ image: DecodedImage, quality: Double) throws -> Data {
        let level = Int(max(1, min(100, (quality.isFinite ? quality : 0.9) * 100).rounded()))
        return try encode(image, settings: Settings(quality: level, orientation: image.orientation))
    }

    static func encode(_ image: DecodedImage, settings: Settings) throws(ImageDecodingError) -> Data {
        guard image.width > 0, image.height > 0 else { throw ImageDecodingError.zeroPixels }
        guard image.width <= maximumDimension, image.height <= maximumDimension else {
            throw ImageDecodingError.tooLarge(width: image.width, height: image.height)
        }
        guard image.pixels.count >= image.width * image.height * 4 else {
            throw ImageDecodingError.corrupt("pixel buffer smaller than width * height * 4")
        }
        let exif = settings.orientation == .up ? [] : exifPayload(orientation: settings.orientation)
        var c = cic_jpeg_encode_settings(
            quality: Int32(max(1, min(100, settings.quality))), progressive: settings.progressive ? 1 : 0,
            subsampling: Int32(Self.subsampling(settings.subsampling).rawValue), optimize_coding: settings.optimizeCoding ? 1 : 0)
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let ok = image.pixels.withUnsafeBufferPointer { pixels in
            exif.withUnsafeBufferPointer { exifBytes in
                message.withUnsafeMutableBufferPointer { text in
                    cic_jpeg_encode_rgba_settings(
                        pixels.baseAddress, Int32(image.width), Int32(image.height), &c,
                        exifBytes.baseAddress, exifBytes.count, &output, &length, text.baseAddress, text.count)
                }
            }
        }
        guard ok != 0, let output else {
            let why = stringFromCBuffer(message)
            throw ImageDecodingError.corrupt("JPEG encoding failed: \(why)")
        }
        defer { cic_jpeg_free(output) }
        return Data(bytes: output, count: length)
    }

    private static func subsampling(_ value: ImageEncodingOptions.ChromaSubsampling) -> cic_jpeg_subsampling {
        switch value {
        case .yuv420: return CIC_JPEG_SUBSAMPLING_420
        case .yuv422: return CIC_JPEG_SUBSAMPLING_422
        case .yuv444: return CIC_JPEG_SUBSAMPLING_444
        }
    }

    /// A minimal APP1 payload: "Exif\0\0", a big-endian TIFF header and one IFD holding only Orientation.
    static func exifPayload(orientation: ImageOrientation) -> [UInt8] {
        let value = UInt8(orientation.rawValue)
        return Array("Exif".utf8) + [0, 0]
            + [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08]   // "MM", 42, IFD at offset 8
            + [0x00, 0x01]                                         // one entry
            + [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01]     // Orientation, SHORT, count 1
            + [0x00, value, 0x00, 0x00]                            // value in place
            + [0x00, 0x00, 0x00, 0x00]                             // no next IFD
    }
}

extension JPEGCoder: ConfigurableImageEncoder {
    /// JPEG with quality, progressive, chroma subsampling and Huffman optimisation; transparent pixels are
    /// composited over `options.background`; no metadata except, when `normalizesOrientation` is false, an
    /// EXIF orientation tag.
    public func encode(_ image: DecodedImage, options: ImageEncodingOptions) throws -> Data {
        guard options.format == .jpeg else { throw ImageEncodingError.unsupportedFormat(options.format) }
        let prepared = try options.prepared(image, flatten: true)
        let settings = JPEGEncoder.Settings(
            quality: options.qualityPercent, progressive: options.progressive, subsampling: options.chromaSubsampling,
            optimizeCoding: options.optimizeCoding, orientation: options.normalizesOrientation ? .up : prepared.orientation)
        do {
            return try JPEGEncoder.encode(prepared, settings: settings)
        } catch {
            throw ImageEncodingError.from(error)
        }
    }
}

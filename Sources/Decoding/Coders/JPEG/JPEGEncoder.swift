import CImageCodecs
import Foundation

/// Writes RGBA8 images as baseline JPEG through libjpeg-turbo.
enum JPEGEncoder {
    /// JPEG's frame header stores 16-bit sizes and libjpeg caps them at 65500.
    static let maximumDimension = 65500

    static func encode(_ image: DecodedImage, quality: Double) throws -> Data {
        guard image.width > 0, image.height > 0 else { throw ImageDecodingError.zeroPixels }
        guard image.width <= maximumDimension, image.height <= maximumDimension else {
            throw ImageDecodingError.tooLarge(width: image.width, height: image.height)
        }
        guard image.pixels.count >= image.width * image.height * 4 else {
            throw ImageDecodingError.corrupt("pixel buffer smaller than width * height * 4")
        }
        let level = Int32(max(1, min(100, (quality.isFinite ? quality : 0.9) * 100).rounded()))
        let exif = image.orientation == .up ? [] : exifPayload(orientation: image.orientation)
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let ok = image.pixels.withUnsafeBufferPointer { pixels in
            exif.withUnsafeBufferPointer { exifBytes in
                message.withUnsafeMutableBufferPointer { text in
                    cic_jpeg_encode_rgba(
                        pixels.baseAddress, Int32(image.width), Int32(image.height), level,
                        exifBytes.baseAddress, exifBytes.count, &output, &length, text.baseAddress, text.count)
                }
            }
        }
        guard ok != 0, let output else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageDecodingError.corrupt("JPEG encoding failed: \(why)")
        }
        defer { cic_jpeg_free(output) }
        return Data(bytes: output, count: length)
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

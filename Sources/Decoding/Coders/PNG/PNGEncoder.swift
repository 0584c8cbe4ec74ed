import CImageCodecs
import Foundation

/// Writes RGBA8 images as PNG through libpng: 8-bit RGB when every pixel is opaque, RGBA otherwise.
enum PNGEncoder {
    /// `level` is zlib's 0...9, or -1 for libpng's default (6).
    static func encode(_ image: DecodedImage, level: Int) throws(ImageDecodingError) -> Data {
        guard image.width > 0, image.height > 0 else { throw ImageDecodingError.zeroPixels }
        let (count, overflow) = image.width.multipliedReportingOverflow(by: image.height * 4)
        guard !overflow, image.pixels.count == count, image.width <= 0x7FFF_FFFF, image.height <= 0x7FFF_FFFF else {
            throw ImageDecodingError.corrupt("pixel buffer does not match \(image.width)x\(image.height) RGBA8")
        }
        let opaque = image.pixels.withUnsafeBufferPointer { p in
            stride(from: 3, to: p.count, by: 4).allSatisfy { p[$0] == 255 }
        }
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 200)
        let status = image.pixels.withUnsafeBufferPointer { p in
            message.withUnsafeMutableBufferPointer { m in
                cic_png_encode_rgba_level(p.baseAddress, UInt32(image.width), UInt32(image.height), opaque ? 0 : 1,
                                          Int32(level), &output, &size, m.baseAddress, m.count)
            }
        }
        guard status == 0, let output else {
            let text = stringFromCBuffer(message)
            throw ImageDecodingError.corrupt("PNG encoding failed: \(text)")
        }
        defer { cic_png_free(output) }
        return Data(bytes: output, count: size)
    }
}

extension PNGCoder: ConfigurableImageEncoder {
    /// PNG at `options.compressionLevel` (0...9), alpha kept, no metadata chunks. `quality` is ignored.
    public func encode(_ image: DecodedImage, options: ImageEncodingOptions) throws -> Data {
        guard options.format == .png else { throw ImageEncodingError.unsupportedFormat(options.format) }
        guard (0...9).contains(options.compressionLevel) else {
            throw ImageEncodingError.invalidOption("PNG compression level \(options.compressionLevel) is not 0...9")
        }
        let prepared = try options.prepared(image, flatten: false)
        do {
            return try PNGEncoder.encode(prepared, level: options.compressionLevel)
        } catch {
            throw ImageEncodingError.from(error)
        }
    }
}

import Foundation

/// Windows bitmaps in Swift: BITMAPCOREHEADER through V5, 1/2/4/8-bit palettes, 16-bit (555, 565, bitfields),
/// 24-bit, 32-bit (BI_RGB is opaque; BI_BITFIELDS/BI_ALPHABITFIELDS with any contiguous masks, alpha included),
/// RLE8 and RLE4, bottom-up and top-down rows.
///
/// A file cut short yields the rows that are there (`isIncomplete`), the rest transparent.
/// BMP has no incremental decoder: the manager buffers it and decodes once at the end.
public struct BMPCoder: ImageCoder {
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .bmp
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        try data.withUnsafeBytes { raw in
            let b = ByteReader(bytes: raw)
            guard b.u8(0) == 0x42, b.u8(1) == 0x4D else { throw ImageDecodingError.corrupt("not a BMP signature") }
            guard let dataOffset = b.u32(10) else { throw ImageDecodingError.truncated }
            let header = try BMPHeader(b, at: 14, options: options)
            // A pixel offset pointing into the headers is broken: use the end of the palette instead.
            let paletteEnd = header.paletteOffset + header.paletteCount * header.paletteEntrySize
            let offset = Int(dataOffset) >= header.paletteOffset ? Int(dataOffset) : paletteEnd
            let decoder = BMPPixelDecoder(header: header, reader: b, isIconDIB: false)
            let output = try decoder.decode(b, start: offset)
            return DecodedImage(width: header.width, height: header.height, pixels: output.pixels, format: .bmp,
                                isIncomplete: output.isIncomplete)
        }
    }
}

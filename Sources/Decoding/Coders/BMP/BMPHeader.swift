/// A parsed DIB header (BITMAPCOREHEADER, BITMAPINFOHEADER, OS/2 2.x, V2/V3, V4 or V5) with its colour
/// masks and palette location. Every field is validated before any pixel memory is allocated.
struct BMPHeader {
    enum Compression: Int {
        case rgb = 0, rle8 = 1, rle4 = 2, bitfields = 3, alphaBitfields = 6
    }

    let headerSize: Int
    let width: Int
    let height: Int
    let topDown: Bool
    let bitCount: Int
    let compression: Compression
    /// Red, green, blue and alpha masks for 16/32-bit images (defaults for BI_RGB).
    let masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32)
    /// Where the palette starts (right after the header and any separate masks), its entry size and count.
    let paletteOffset: Int
    let paletteEntrySize: Int
    let paletteCount: Int

    /// Parses the DIB header at `offset` of `b`. `heightDivisor` is 2 for icon DIBs (XOR + AND mask height).
    init(_ b: ByteReader, at offset: Int, options: ImageDecodingOptions, heightDivisor: Int = 1) throws {
        guard let size = b.u32(offset) else { throw ImageDecodingError.truncated }
        headerSize = Int(size)
        // The plane count is ignored, as browsers and Pillow do.
        let rawWidth: Int, rawHeight: Int, bits: Int, compressionValue: Int, colorsUsed: Int
        if headerSize == 12 {
            guard let w = b.u16(offset + 4), let h = b.u16(offset + 6),
                  let c = b.u16(offset + 10) else { throw ImageDecodingError.truncated }
            (rawWidth, rawHeight, bits, compressionValue, colorsUsed) = (w, h, c, 0, 0)
        } else if [16, 40, 52, 56, 64, 108, 124].contains(headerSize) {
            guard let w = b.i32(offset + 4), let h = b.i32(offset + 8),
                  let c = b.u16(offset + 14) else { throw ImageDecodingError.truncated }
            let comp = headerSize >= 20 ? b.u32(offset + 16) : 0
            let used = headerSize >= 36 ? b.u32(offset + 32) : 0
            guard let comp, let used else { throw ImageDecodingError.truncated }
            (rawWidth, rawHeight, bits) = (w, h, c)
            compressionValue = Int(comp)
            colorsUsed = Int(used)
        } else {
            throw ImageDecodingError.corrupt("BMP header size \(headerSize) is unknown")
        }
        guard rawWidth >= 0 else { throw ImageDecodingError.corrupt("BMP width is negative") }
        // 2-bit palettes are Windows CE's; Firefox and Chromium decode them (Pillow does not).
        guard [1, 2, 4, 8, 16, 24, 32].contains(bits) else {
            throw ImageDecodingError.corrupt("BMP bit depth \(bits) is unsupported")
        }
        topDown = rawHeight < 0
        width = rawWidth
        let fullHeight = abs(rawHeight)
        height = fullHeight / heightDivisor
        try options.checkDimensions(width: width, height: height)
        bitCount = bits

        guard let compression = Compression(rawValue: compressionValue) else {
            throw ImageDecodingError.corrupt("BMP compression \(compressionValue) is unsupported")
        }
        self.compression = compression
        switch compression {
        case .rle8 where bits != 8, .rle4 where bits != 4:
            throw ImageDecodingError.corrupt("BMP RLE compression does not match bit depth \(bits)")
        case .rle8, .rle4:
            guard !topDown else { throw ImageDecodingError.corrupt("BMP RLE image cannot be top-down") }
        case .bitfields, .alphaBitfields:
            guard bits == 16 || bits == 32 else {
                throw ImageDecodingError.corrupt("BMP bitfields need 16 or 32 bits, not \(bits)")
            }
        case .rgb:
            break
        }

        // Masks live inside V2+ headers, or right after a 40-byte header for BI_BITFIELDS.
        var afterHeader = offset + headerSize
        var masks: (UInt32, UInt32, UInt32, UInt32)
        switch (bits, compression) {
        case (16, .rgb): masks = (0x7C00, 0x03E0, 0x001F, 0)
        case (32, .rgb), (24, .rgb): masks = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0)
        case (_, .bitfields), (_, .alphaBitfields):
            let maskOffset = headerSize >= 52 ? offset + 40 : afterHeader
            guard let r = b.u32(maskOffset), let g = b.u32(maskOffset + 4), let bl = b.u32(maskOffset + 8) else {
                throw ImageDecodingError.truncated
            }
            var a: UInt32 = 0
            if headerSize >= 56 {
                a = b.u32(offset + 52) ?? 0
            } else if compression == .alphaBitfields {
                a = b.u32(maskOffset + 12) ?? 0
            }
            masks = (r, g, bl, a)
            if headerSize < 52 { afterHeader += compression == .alphaBitfields ? 16 : 12 }
        default: masks = (0, 0, 0, 0)
        }
        self.masks = masks
        if compression == .bitfields || compression == .alphaBitfields {
            try Self.validate(masks: masks, bits: bits)
        }

        paletteOffset = afterHeader
        paletteEntrySize = headerSize == 12 ? 3 : 4
        if bits <= 8 {
            let maximum = 1 << bits
            paletteCount = colorsUsed == 0 || colorsUsed > maximum ? maximum : colorsUsed
        } else {
            paletteCount = 0
        }
    }

    /// Each mask must be one run of set bits, within the pixel's bits and not overlapping the others: every
    /// layout bmpsuite calls valid (rgb32bf's 0x00000FF0 green, 10-bit and 11-bit channels, 16-bit 3-10-3), as
    /// browsers decode them. Pillow accepts only a few fixed layouts and refuses the rest.
    private static func validate(masks m: (UInt32, UInt32, UInt32, UInt32), bits: Int) throws {
        let all = [m.0, m.1, m.2, m.3]
        var union: UInt32 = 0
        for mask in all where mask != 0 {
            let shifted = mask >> UInt32(mask.trailingZeroBitCount)
            let contiguous = shifted & (shifted &+ 1) == 0
            guard contiguous, union & mask == 0, bits != 16 || mask <= 0xFFFF else {
                throw ImageDecodingError.corrupt("BMP bitfields layout is unsupported")
            }
            union |= mask
        }
        guard m.0 != 0 || m.1 != 0 || m.2 != 0 else {
            throw ImageDecodingError.corrupt("BMP bitfields masks are all zero")
        }
    }

    /// Bytes per stored row: bits rounded up to a multiple of 32.
    var rowStride: Int { ((width * bitCount + 31) / 32) * 4 }
}

/// Bounds-checked little-endian reads: every accessor returns nil past the end instead of trapping.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer

    var count: Int { bytes.count }

    func u8(_ i: Int) -> Int? {
        guard i >= 0, i < bytes.count else { return nil }
        return Int(bytes[i])
    }

    func u16(_ i: Int) -> Int? {
        guard i >= 0, i <= bytes.count - 2 else { return nil }
        return Int(bytes[i]) | Int(bytes[i + 1]) << 8
    }

    func u32(_ i: Int) -> UInt32? {
        guard i >= 0, i <= bytes.count - 4 else { return nil }
        return UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
    }

    func i32(_ i: Int) -> Int? {
        u32(i).map { Int(Int32(bitPattern: $0)) }
    }
}

/// Turns the stored rows of a DIB into top-down RGBA8: palette depths, 16/24/32-bit with masks, RLE4/RLE8,
/// and the 1-bit AND mask of icon DIBs. Works for BMP files and for DIBs embedded in ICO files.
struct BMPPixelDecoder {
    let header: BMPHeader
    /// Palette as RGBA quadruplets; indices past it are opaque black.
    let palette: [UInt8]
    /// Icon DIBs: a 32-bit BI_RGB image carries alpha, and an AND mask follows the colour rows.
    let isIconDIB: Bool

    init(header: BMPHeader, reader b: ByteReader, isIconDIB: Bool) {
        self.header = header
        self.isIconDIB = isIconDIB
        var table = [UInt8]()
        table.reserveCapacity(header.paletteCount * 4)
        for i in 0..<header.paletteCount {
            let o = header.paletteOffset + i * header.paletteEntrySize
            guard let blue = b.u8(o), let green = b.u8(o + 1), let red = b.u8(o + 2) else { break }
            table += [UInt8(red), UInt8(green), UInt8(blue), 255]
        }
        palette = table
    }

    /// The decoded image: `rows` of the height could be decoded (fewer when the data is cut short).
    struct Output {
        var pixels: [UInt8]
        var isIncomplete: Bool
    }

    /// Decodes the pixel data starting at `start`; throws `.truncated` when not a single row is there.
    func decode(_ b: ByteReader, start: Int) throws -> Output {
        switch header.compression {
        case .rle4, .rle8: return try decodeRLE(b, start: start)
        default: return try decodeRows(b, start: start)
        }
    }

    // MARK: - Uncompressed and bitfields

    private func decodeRows(_ b: ByteReader, start: Int) throws -> Output {
        let width = header.width, height = header.height, stride = header.rowStride
        let availableBytes = max(0, b.count - start)
        let rows = min(height, availableBytes / max(stride, 1))
        guard rows > 0 else { throw ImageDecodingError.truncated }
        var out = [UInt8](repeating: 0, count: width * height * 4)
        let channels = MaskChannels(header.masks)
        // An icon's 32-bit entry keeps alpha in its fourth byte whatever its header says: BI_RGB, or bitfields
        // without an alpha mask (V5 entries written with RGB masks only), as Windows and Pillow read it.
        let colorMasks = header.masks.red | header.masks.green | header.masks.blue
        let useAlphaByte = isIconDIB && header.bitCount == 32
            && (header.compression == .rgb || (header.masks.alpha == 0 && colorMasks & 0xFF00_0000 == 0))
        out.withUnsafeMutableBufferPointer { dst in
            palette.withUnsafeBufferPointer { pal in
                for stored in 0..<rows {
                    let row = header.topDown ? stored : height - 1 - stored
                    let src = start + stored * stride
                    var o = row * width * 4
                    for x in 0..<width {
                        switch header.bitCount {
                        case 1, 2, 4, 8:
                            let bits = header.bitCount
                            let bitOffset = x * bits
                            let byte = Int(b.bytes[src + bitOffset / 8])
                            let index = (byte >> (8 - bits - bitOffset % 8)) & ((1 << bits) - 1)
                            if index * 4 + 3 < pal.count {
                                dst[o] = pal[index * 4]
                                dst[o + 1] = pal[index * 4 + 1]
                                dst[o + 2] = pal[index * 4 + 2]
                            } else {
                                dst[o] = 0; dst[o + 1] = 0; dst[o + 2] = 0
                            }
                            dst[o + 3] = 255
                        case 24:
                            let p = src + x * 3
                            dst[o] = b.bytes[p + 2]
                            dst[o + 1] = b.bytes[p + 1]
                            dst[o + 2] = b.bytes[p]
                            dst[o + 3] = 255
                        case 16:
                            let p = src + x * 2
                            channels.write(UInt32(b.bytes[p]) | UInt32(b.bytes[p + 1]) << 8, to: dst, at: o)
                        default:
                            let p = src + x * 4
                            let value = UInt32(b.bytes[p]) | UInt32(b.bytes[p + 1]) << 8
                                | UInt32(b.bytes[p + 2]) << 16 | UInt32(b.bytes[p + 3]) << 24
                            channels.write(value, to: dst, at: o)
                            if useAlphaByte { dst[o + 3] = b.bytes[p + 3] }
                        }
                        o += 4
                    }
                }
            }
        }
        if isIconDIB { applyANDMask(b, start: start + stride * height, to: &out) }
        return Output(pixels: out, isIncomplete: rows < height)
    }

    /// Icons without alpha of their own take transparency from the AND mask (1 = transparent).
    private func applyANDMask(_ b: ByteReader, start: Int, to out: inout [UInt8]) {
        let width = header.width, height = header.height
        if header.bitCount == 32 {
            var anyAlpha = false
            for i in stride(from: 3, to: out.count, by: 4) where out[i] != 0 {
                anyAlpha = true
                break
            }
            guard !anyAlpha else { return }
            for i in stride(from: 3, to: out.count, by: 4) { out[i] = 255 }
        }
        let maskStride = ((width + 31) / 32) * 4
        for stored in 0..<height {
            let row = header.topDown ? stored : height - 1 - stored
            let src = start + stored * maskStride
            guard src + maskStride <= b.count else { break }
            for x in 0..<width where Int(b.bytes[src + x / 8]) & (0x80 >> (x % 8)) != 0 {
                out[(row * width + x) * 4 + 3] = 0
            }
        }
    }

    // MARK: - RLE

    /// RLE8/RLE4 with end-of-line, end-of-bitmap, delta and absolute runs (padded to 16 bits).
    ///
    /// Indices are laid out in one linear run over the stored rows, the model of Pillow (the corpus reference)
    /// that also fixes what damaged streams produce: encoded runs are clipped to the row, an absolute run that
    /// overflows its row continues on the next one, and pixels never written (delta jumps, short lines) keep
    /// index 0. Valid files decode the same under every model.
    private func decodeRLE(_ b: ByteReader, start: Int) throws -> Output {
        let width = header.width, height = header.height
        let total = width * height
        let rle4 = header.compression == .rle4
        var indices = [UInt8](repeating: 0, count: total)
        var cursor = 0, x = 0, i = start
        var ended = false

        func put(_ index: Int) {
            if cursor < total { indices[cursor] = UInt8(truncatingIfNeeded: index) }
            cursor += 1
        }

        // Every pass consumes at least two bytes, so the loop ends with the data.
        while cursor < total, let count = b.u8(i), let value = b.u8(i + 1) {
            i += 2
            if count > 0 {
                let run = x + count > width ? max(0, width - x) : count
                for k in 0..<run { put(rle4 ? (k % 2 == 0 ? value >> 4 : value & 0x0F) : value) }
                x += run
                continue
            }
            if value == 0 {
                cursor = (cursor + width - 1) / width * width
                x = 0
            } else if value == 1 {
                ended = true
                break
            } else if value == 2 {
                guard let dx = b.u8(i), let dy = b.u8(i + 1) else { break }
                i += 2
                cursor += dx + dy * width
                x = cursor % width
            } else {
                let byteCount = rle4 ? (value + 1) / 2 : value
                guard i + byteCount <= b.count else { break }
                for k in 0..<value {
                    let byte = Int(b.bytes[i + (rle4 ? k / 2 : k)])
                    put(rle4 ? (k % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                }
                x += value
                i += byteCount + (byteCount & 1)
            }
        }
        guard cursor > 0 || ended else { throw ImageDecodingError.truncated }

        var out = [UInt8](repeating: 0, count: total * 4)
        for stored in 0..<height {
            let row = height - 1 - stored
            for px in 0..<width {
                let index = Int(indices[stored * width + px])
                let o = (row * width + px) * 4
                if index * 4 + 3 < palette.count {
                    out[o] = palette[index * 4]
                    out[o + 1] = palette[index * 4 + 1]
                    out[o + 2] = palette[index * 4 + 2]
                }
                out[o + 3] = 255
            }
        }
        return Output(pixels: out, isIncomplete: !ended && cursor < total)
    }
}

/// Per-channel shift and scale for masked 16/32-bit pixels: fields narrower than 8 bits are widened as
/// v * 255 / max (what Pillow gives for 555/565), wider ones keep their top 8 bits (as browsers do).
struct MaskChannels {
    private struct Channel {
        let mask: UInt32, shift: UInt32, maximum: UInt32, dropBits: UInt32
        init(_ mask: UInt32) {
            self.mask = mask
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            maximum = mask == 0 ? 0 : mask >> shift
            dropBits = UInt32(max(0, mask.nonzeroBitCount - 8))
        }
        func value(_ pixel: UInt32) -> UInt8 {
            guard maximum > 0 else { return 0 }
            let field = (pixel & mask) >> shift
            if dropBits > 0 { return UInt8(truncatingIfNeeded: field >> dropBits) }
            return UInt8(truncatingIfNeeded: UInt64(field) * 255 / UInt64(maximum))
        }
    }

    private let red: Channel, green: Channel, blue: Channel, alpha: Channel

    init(_ masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32)) {
        red = Channel(masks.red)
        green = Channel(masks.green)
        blue = Channel(masks.blue)
        alpha = Channel(masks.alpha)
    }

    func write(_ pixel: UInt32, to dst: UnsafeMutableBufferPointer<UInt8>, at o: Int) {
        dst[o] = red.value(pixel)
        dst[o + 1] = green.value(pixel)
        dst[o + 2] = blue.value(pixel)
        dst[o + 3] = alpha.maximum > 0 ? alpha.value(pixel) : 255
    }
}

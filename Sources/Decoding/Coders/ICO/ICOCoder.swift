import Foundation

/// Windows icons and cursors (`.cur`, ICONDIR type 2, reported as `.ico`): the directory's largest entry,
/// then the deepest, is decoded. PNG entries go
/// through the PNG coder registered in `ImageCodersManager.shared`; DIB entries (no file header, height
/// doubled for the AND mask) through the BMP code, with the AND mask as alpha when the DIB has none. A 1-bit
/// cursor's masked pixels are transparent black (Pillow's CUR reader; browsers store them premultiplied, so
/// they show the same), where icons keep the colour under a masked pixel as Pillow's ICO reader does.
public struct ICOCoder: ImageCoder {
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .ico
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let directory = try ICODirectory(data)
        let entry = directory.largestEntry()
        guard entry.offset < data.count else { throw ImageDecodingError.truncated }
        // The entry runs to the end of the file: its stated length is not trusted (writers get it wrong, too
        // small or zero as often as too large). The PNG and DIB decoders find their own end, as Pillow's and
        // Chromium's icon readers let them.
        let payload = data.subdata(in: (data.startIndex + entry.offset)..<data.endIndex)
        switch ImageFormat(sniffing: payload) {
        case .png:
            return try decodePNG(payload, options: options)
        case .ico:
            // An icon inside an icon would recurse through the manager: refuse it.
            throw ImageDecodingError.corrupt("ICO entry is itself an ICO file")
        default:
            return try decodeDIB(payload, options: options, isCursor: directory.isCursor)
        }
    }

    private func decodePNG(_ payload: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let coder = ImageCodersManager.shared.coders.reversed().first { !($0 is ICOCoder) && $0.canDecode(payload) }
        guard let coder else { throw ImageDecodingError.unsupportedFormat }
        let image = try coder.decode(payload, options: options)
        var icon = DecodedImage(width: image.width, height: image.height, pixels: image.pixels, format: .ico,
                                orientation: image.orientation, isIncomplete: image.isIncomplete,
                                iccProfile: image.iccProfile, colorState: image.colorState)
        icon.colorSource = image.colorSource
        return icon
    }

    private func decodeDIB(_ payload: Data, options: ImageDecodingOptions, isCursor: Bool) throws -> DecodedImage {
        try payload.withUnsafeBytes { raw in
            let b = ByteReader(bytes: raw)
            let header = try BMPHeader(b, at: 0, options: options, heightDivisor: 2)
            let pixelStart = header.paletteOffset + header.paletteCount * header.paletteEntrySize
            var output = try BMPPixelDecoder(header: header, reader: b, isIconDIB: true).decode(b, start: pixelStart)
            if isCursor && header.bitCount == 1 {
                for i in stride(from: 0, to: output.pixels.count, by: 4) where output.pixels[i + 3] == 0 {
                    output.pixels[i] = 0
                    output.pixels[i + 1] = 0
                    output.pixels[i + 2] = 0
                }
            }
            return DecodedImage(width: header.width, height: header.height, pixels: output.pixels, format: .ico,
                                isIncomplete: output.isIncomplete)
        }
    }
}

/// The ICONDIR header and its 16-byte entries.
struct ICODirectory {
    struct Entry {
        let width: Int, height: Int, bitCount: Int, offset: Int
    }

    let entries: [Entry]
    /// ICONDIR type 2: a cursor (`.cur`).
    let isCursor: Bool

    init(_ data: Data) throws {
        let bytes = [UInt8](data.prefix(6))
        guard bytes.count == 6 else { throw ImageDecodingError.truncated }
        let type = Int(bytes[2]) | Int(bytes[3]) << 8
        let count = Int(bytes[4]) | Int(bytes[5]) << 8
        guard bytes[0] == 0, bytes[1] == 0, type == 1 || type == 2 else {
            throw ImageDecodingError.corrupt("not an ICO/CUR directory")
        }
        guard count > 0 else { throw ImageDecodingError.corrupt("ICO directory has no entries") }
        var entries: [Entry] = []
        // In a cursor the planes and bit-count fields hold the hotspot, so depth is unknown there.
        isCursor = type == 2
        data.withUnsafeBytes { raw in
            let b = ByteReader(bytes: raw)
            for i in 0..<count {
                let o = 6 + i * 16
                // Bytes 8-11 (the entry's length) are not used: see `decode`.
                guard let w = b.u8(o), let h = b.u8(o + 1), let bits = b.u16(o + 6), let offset = b.u32(o + 12) else { break }
                entries.append(Entry(width: w == 0 ? 256 : w, height: h == 0 ? 256 : h,
                                     bitCount: type == 2 ? 0 : bits, offset: Int(offset)))
            }
        }
        guard !entries.isEmpty else { throw ImageDecodingError.truncated }
        self.entries = entries
    }

    /// The largest entry by area, then by bit depth; the first one listed wins ties.
    func largestEntry() -> Entry {
        var best = entries[0]
        for e in entries.dropFirst() {
            let area = e.width * e.height, bestArea = best.width * best.height
            if area > bestArea || (area == bestArea && e.bitCount > best.bitCount) { best = e }
        }
        return best
    }
}

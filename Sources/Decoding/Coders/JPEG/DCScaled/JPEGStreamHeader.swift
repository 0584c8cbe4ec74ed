import Foundation

/// The markers of a JPEG up to its first scan, parsed in Swift for the DC-only thumbnail path
/// (`JPEGDCThumbnailDecoder`). Only what that path needs is kept; anything it cannot handle (arithmetic
/// coding, 12-bit samples, lossless, DNL, hierarchical, odd sampling) makes `parse` return nil, and the
/// caller falls back to libjpeg. Every read is bounds-checked.
struct JPEGStreamHeader {
    struct Component {
        var id: UInt8
        var h: Int
        var v: Int
        var quantTable: Int
        var dcTable = 0
        var acTable = 0
    }

    var width = 0
    var height = 0
    var progressive = false
    var components: [Component] = []
    /// Quantisation tables by id 0...3, in natural (row-major) order; empty when not defined.
    var quant = [[Int32]](repeating: [], count: 4)
    /// Huffman tables by id 0...3: DC (class 0) and AC (class 1).
    var dcTables = [JPEGHuffmanLookup?](repeating: nil, count: 4)
    var acTables = [JPEGHuffmanLookup?](repeating: nil, count: 4)
    var restartInterval = 0
    var orientation = ImageOrientation.up
    /// APP14 "Adobe" transform flag, when present (0: RGB or CMYK, 1: YCbCr, 2: YCCK).
    var adobeTransform: Int?
    /// APP2 "ICC_PROFILE" chunks, joined by `iccProfile`.
    private var iccChunks = JPEGICCChunks()
    /// Where the entropy-coded data of the first scan starts.
    var scanDataOffset = 0
    /// Scan header of the first scan: components (indices into `components`), spectral range, approximation.
    var scanComponents: [Int] = []
    var spectralStart = 0
    var spectralEnd = 0
    var approximationHigh = 0
    var approximationLow = 0

    /// Parses up to and including the first SOS, or nil when the stream is not one the DC path handles.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> JPEGStreamHeader? {
        var header = JPEGStreamHeader()
        var reader = JPEGMarkerReader(bytes: bytes, position: 2)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var sawFrame = false
        while let marker = reader.nextMarker() {
            guard let segment = reader.segment() else { return nil }
            switch marker {
            case 0xC0, 0xC1, 0xC2:
                guard !sawFrame, header.parseFrame(segment, progressive: marker == 0xC2) else { return nil }
                sawFrame = true
            case 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                return nil   // lossless, hierarchical, arithmetic: libjpeg's business
            case 0xC4:
                guard header.parseHuffman(segment) else { return nil }
            case 0xDB:
                guard header.parseQuantisation(segment) else { return nil }
            case 0xDD:
                // Segments are slices of the whole input: index from their own start.
                let b = Array(segment)
                guard b.count >= 2 else { return nil }
                header.restartInterval = Int(b[0]) << 8 | Int(b[1])
            case 0xE1:
                if segment.count > 6, let value = EXIFOrientation.parse(segment) { header.orientation = value }
            case 0xE2:
                header.iccChunks.add(Array(segment))
            case 0xEE:
                let b = Array(segment)
                if b.count >= 12, Array(b.prefix(5)) == Array("Adobe".utf8) { header.adobeTransform = Int(b[11]) }
            case 0xDA:
                guard sawFrame, header.parseScan(segment) else { return nil }
                header.scanDataOffset = reader.position
                return header
            default:
                continue   // APPn, COM and friends
            }
        }
        return nil
    }

    /// The embedded ICC profile (every APP2 chunk present, joined in sequence order), or nil.
    var iccProfile: [UInt8]? { iccChunks.profile }

    private mutating func parseFrame(_ s: UnsafeRawBufferPointer.SubSequence, progressive: Bool) -> Bool {
        guard s.count >= 6 else { return false }
        let b = Array(s)
        guard b[0] == 8 else { return false }   // 12-bit samples
        height = Int(b[1]) << 8 | Int(b[2])
        width = Int(b[3]) << 8 | Int(b[4])
        let count = Int(b[5])
        guard width > 0, height > 0, count == 1 || count == 3, b.count >= 6 + 3 * count else { return false }
        self.progressive = progressive
        for i in 0..<count {
            let sampling = b[6 + 3 * i + 1]
            let h = Int(sampling >> 4), v = Int(sampling & 15), q = Int(b[6 + 3 * i + 2])
            guard (1...2).contains(h), (1...2).contains(v), q < 4 else { return false }
            components.append(Component(id: b[6 + 3 * i], h: count == 1 ? 1 : h, v: count == 1 ? 1 : v, quantTable: q))
        }
        // Chroma must not be sampled more densely than luma (the upsampler only doubles).
        if count == 3, components[1...].contains(where: { $0.h > components[0].h || $0.v > components[0].v }) { return false }
        return true
    }

    private mutating func parseQuantisation(_ s: UnsafeRawBufferPointer.SubSequence) -> Bool {
        var i = s.startIndex
        while i < s.endIndex {
            let precision = Int(s[i] >> 4), id = Int(s[i] & 15)
            let size = precision == 0 ? 64 : 128
            guard id < 4, precision <= 1, s.endIndex - i - 1 >= size else { return false }
            var table = [Int32](repeating: 0, count: 64)
            for k in 0..<64 {
                let value = precision == 0 ? Int32(s[i + 1 + k]) : Int32(s[i + 1 + 2 * k]) << 8 | Int32(s[i + 2 + 2 * k])
                table[JPEGZigzag.natural[k]] = value
            }
            quant[id] = table
            i += 1 + size
        }
        return true
    }

    private mutating func parseHuffman(_ s: UnsafeRawBufferPointer.SubSequence) -> Bool {
        var i = s.startIndex
        while i < s.endIndex {
            guard s.endIndex - i >= 17 else { return false }
            let tableClass = Int(s[i] >> 4), id = Int(s[i] & 15)
            guard tableClass <= 1, id < 4 else { return false }
            let counts = (0..<16).map { Int(s[i + 1 + $0]) }
            let total = counts.reduce(0, +)
            guard total <= 256, s.endIndex - i - 17 >= total else { return false }
            let symbols = Array(s[(i + 17)..<(i + 17 + total)])
            guard let table = JPEGHuffmanLookup(counts: counts, symbols: symbols) else { return false }
            if tableClass == 0 { dcTables[id] = table } else { acTables[id] = table }
            i += 17 + total
        }
        return true
    }

    private mutating func parseScan(_ s: UnsafeRawBufferPointer.SubSequence) -> Bool {
        let b = Array(s)
        guard let n = b.first.map(Int.init), n >= 1, b.count >= 1 + 2 * n + 3 else { return false }
        for i in 0..<n {
            guard let index = components.firstIndex(where: { $0.id == b[1 + 2 * i] }) else { return false }
            components[index].dcTable = Int(b[2 + 2 * i] >> 4)
            components[index].acTable = Int(b[2 + 2 * i] & 15)
            guard components[index].dcTable < 4, components[index].acTable < 4 else { return false }
            scanComponents.append(index)
        }
        spectralStart = Int(b[1 + 2 * n])
        spectralEnd = Int(b[2 + 2 * n])
        approximationHigh = Int(b[3 + 2 * n] >> 4)
        approximationLow = Int(b[3 + 2 * n] & 15)
        return true
    }
}

/// Walks marker segments: `nextMarker` skips fill bytes, `segment` returns the payload after the length.
struct JPEGMarkerReader {
    let bytes: UnsafeRawBufferPointer
    var position: Int

    mutating func nextMarker() -> UInt8? {
        while position + 1 < bytes.count {
            guard bytes[position] == 0xFF else { return nil }
            let marker = bytes[position + 1]
            position += 2
            if marker == 0xFF { position -= 1; continue }   // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { continue }   // no payload
            if marker == 0xD9 { return nil }
            return marker
        }
        return nil
    }

    mutating func segment() -> UnsafeRawBufferPointer.SubSequence? {
        guard position + 2 <= bytes.count else { return nil }
        let length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
        guard length >= 2, position + length <= bytes.count else { return nil }
        defer { position += length }
        return bytes[(position + 2)..<(position + length)]
    }
}

/// The zigzag scan order of JPEG coefficients.
enum JPEGZigzag {
    /// Natural (row-major) index of the k-th coefficient in zigzag order, with libjpeg's 16 extra entries
    /// (all 63) so a corrupt run past the end of a block stays inside the block.
    static let natural: [Int] = [
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
        12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
        58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    ] + [Int](repeating: 63, count: 16)
}

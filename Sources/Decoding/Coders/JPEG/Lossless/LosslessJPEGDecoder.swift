import Foundation

/// Lossless JPEG (SOF3, ITU-T T.81 annex H) decoded in Swift, for the libjpeg-turbo versions before 3.0 that
/// refuse it (Debian 12 has 2.1.5): Huffman-coded differences from one of the seven predictors, any precision
/// from 2 to 16 bits, a point transform, restart intervals, one or three components (interleaved or in scans of
/// their own, sampled 1×1). Colour as libjpeg-turbo 3.0 reads a lossless file: three components are RGB unless a
/// JFIF marker or an Adobe marker with transform 1 says YCbCr (then converted with libjpeg's integer formula).
/// Samples above 8 bits keep their top 8 bits, below 8 they are scaled, as for every other format here.
///
/// A file cut short decodes as libjpeg would (the missing bits read as zeros) and is `isIncomplete`; one that ends
/// before its first scan throws `.truncated`. Arithmetic-coded lossless (SOF11), subsampled components and 2 or 4
/// components stay a typed `UnsupportedImageFeature`.
struct LosslessJPEGDecoder {
    struct Frame {
        var precision = 8
        var width = 0
        var height = 0
        /// Component ids in frame order.
        var ids: [UInt8] = []
    }

    let options: ImageDecodingOptions

    func decode(_ data: Data) throws -> DecodedImage {
        try data.withUnsafeBytes { try decode($0) }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer) throws -> DecodedImage {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw ImageDecodingError.truncated }
        var reader = JPEGMarkerReader(bytes: bytes, position: 2)
        var frame: Frame?
        var tables = [JPEGHuffmanLookup?](repeating: nil, count: 4)
        var restartInterval = 0
        var markers = LosslessJPEGMarkers()
        var planes: [[UInt16]] = []
        var scans = 0
        var incomplete = false
        while let marker = reader.nextMarker() {
            guard let segment = reader.segment() else {
                if scans == 0 { throw ImageDecodingError.truncated }
                incomplete = true
                break
            }
            switch marker {
            case 0xC3:
                guard frame == nil else { throw ImageDecodingError.corrupt("lossless JPEG with two frame headers") }
                let parsed = try Self.frame(Array(segment))
                try options.checkDimensions(width: parsed.width, height: parsed.height,
                                            workingCanvases: 1 + (parsed.ids.count + 1) / 2)
                planes = parsed.ids.map { _ in [UInt16](repeating: 0, count: parsed.width * parsed.height) }
                frame = parsed
            case 0xC4:
                try Self.huffmanTables(Array(segment), into: &tables)
            case 0xDD:
                let b = Array(segment)
                guard b.count >= 2 else { throw ImageDecodingError.corrupt("short DRI segment") }
                restartInterval = Int(b[0]) << 8 | Int(b[1])
            case 0xDA:
                guard let frame else { throw ImageDecodingError.corrupt("lossless JPEG scan before its frame header") }
                let header = try LosslessJPEGScan.Header(Array(segment), frame: frame, tables: tables)
                let entropy = JPEGEntropySegments(bytes, from: reader.position)
                var scan = LosslessJPEGScan(header: header, frame: frame, restartInterval: restartInterval, entropy: entropy)
                try scan.decode(into: &planes)
                scans += 1
                if !entropy.terminated { incomplete = true }
                reader.position = entropy.endOfScan
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                throw ImageDecodingError.corrupt("a lossless JPEG with a second frame type (SOF\(marker - 0xC0))")
            case 0xDC:
                throw UnsupportedImageFeature(format: .jpeg, feature: "lossless JPEG with a DNL marker",
                                              requirement: "a JPEG decoder that reads the height from DNL")
            default:
                markers.read(marker, Array(segment))
            }
            if incomplete { break }
        }
        guard let frame, scans > 0 else { throw ImageDecodingError.truncated }
        var image = DecodedImage(width: frame.width, height: frame.height,
                                 pixels: Self.rgba(planes, frame: frame, ycbcr: markers.isYCbCr(components: frame.ids.count)),
                                 format: .jpeg, orientation: markers.orientation, isIncomplete: incomplete)
        if let profile = markers.iccProfile {
            image.iccProfile = Data(profile)
            image.colorState = .awaitingConversion
        }
        return image
    }

    static func frame(_ b: [UInt8]) throws -> Frame {
        guard b.count >= 6 else { throw ImageDecodingError.corrupt("short lossless JPEG frame header") }
        var frame = Frame()
        frame.precision = Int(b[0])
        frame.height = Int(b[1]) << 8 | Int(b[2])
        frame.width = Int(b[3]) << 8 | Int(b[4])
        let count = Int(b[5])
        guard (2...16).contains(frame.precision) else {
            throw ImageDecodingError.corrupt("lossless JPEG precision \(frame.precision) outside 2...16")
        }
        guard frame.height > 0 else {
            throw UnsupportedImageFeature(format: .jpeg, feature: "lossless JPEG with a DNL marker",
                                          requirement: "a JPEG decoder that reads the height from DNL")
        }
        guard count == 1 || count == 3 else {
            throw UnsupportedImageFeature(format: .jpeg, feature: "lossless JPEG with \(count) components",
                                          requirement: "libjpeg-turbo 3.0 or later (this build decodes 1 or 3 components)")
        }
        guard b.count >= 6 + 3 * count else { throw ImageDecodingError.corrupt("short lossless JPEG frame header") }
        for c in 0..<count {
            let sampling = b[7 + 3 * c]
            guard sampling == 0x11 else {
                throw UnsupportedImageFeature(format: .jpeg, feature: "lossless JPEG with subsampled components",
                                              requirement: "libjpeg-turbo 3.0 or later")
            }
            frame.ids.append(b[6 + 3 * c])
        }
        guard Set(frame.ids).count == count else { throw ImageDecodingError.corrupt("lossless JPEG with repeated component ids") }
        return frame
    }

    static func huffmanTables(_ b: [UInt8], into tables: inout [JPEGHuffmanLookup?]) throws {
        var i = 0
        while i < b.count {  // each table advances i by at least 17 bytes, or throws
            guard i + 17 <= b.count else { throw ImageDecodingError.corrupt("short DHT segment") }
            let kind = Int(b[i] >> 4), id = Int(b[i] & 0x0F)
            let counts = (0..<16).map { Int(b[i + 1 + $0]) }
            let total = counts.reduce(0, +)
            guard id < 4, kind <= 1, i + 17 + total <= b.count else { throw ImageDecodingError.corrupt("bad DHT segment") }
            let symbols = Array(b[(i + 17)..<(i + 17 + total)])
            // Lossless scans use the DC tables (class 0); an AC table in the file is ignored.
            if kind == 0 {
                guard symbols.allSatisfy({ $0 <= 16 }), let table = JPEGHuffmanLookup(counts: counts, symbols: symbols) else {
                    throw ImageDecodingError.corrupt("bad lossless Huffman table")
                }
                tables[id] = table
            }
            i += 17 + total
        }
    }

    /// The reconstructed samples as RGBA8: each to 8 bits (top bits above 8, scaled below), gray spread to RGB,
    /// YCbCr converted with libjpeg's integer formula.
    static func rgba(_ planes: [[UInt16]], frame: Frame, ycbcr: Bool) -> [UInt8] {
        let count = frame.width * frame.height
        let p = frame.precision
        let maximum = (1 << p) - 1
        func to8(_ v: UInt16) -> UInt8 {
            if p == 8 { return UInt8(truncatingIfNeeded: v) }
            if p > 8 { return UInt8(truncatingIfNeeded: Int(v) >> (p - 8)) }
            return UInt8((min(Int(v), maximum) * 255 + maximum / 2) / maximum)
        }
        var out = [UInt8](repeating: 255, count: count * 4)
        if planes.count == 1 {
            for i in 0..<count {
                let g = to8(planes[0][i])
                out[i * 4] = g; out[i * 4 + 1] = g; out[i * 4 + 2] = g
            }
        } else {
            for i in 0..<count {
                let (a, b, c) = (to8(planes[0][i]), to8(planes[1][i]), to8(planes[2][i]))
                let (r, g, bl) = ycbcr ? YCbCr.toRGB(a, b, c) : (a, b, c)
                out[i * 4] = r; out[i * 4 + 1] = g; out[i * 4 + 2] = bl
            }
        }
        return out
    }
}

/// libjpeg's YCbCr → RGB (jdcolor.c: 16-bit fixed point, rounded, clamped).
enum YCbCr {
    static func toRGB(_ y: UInt8, _ cb: UInt8, _ cr: UInt8) -> (UInt8, UInt8, UInt8) {
        func fix(_ x: Double) -> Int { Int(x * 65536 + 0.5) }
        let half = 1 << 15
        let x = Int(cr) - 128, z = Int(cb) - 128
        let r = Int(y) + ((fix(1.40200) * x + half) >> 16)
        let g = Int(y) + ((-fix(0.34414) * z + half - fix(0.71414) * x) >> 16)
        let b = Int(y) + ((fix(1.77200) * z + half) >> 16)
        func clamp(_ v: Int) -> UInt8 { UInt8(min(max(v, 0), 255)) }
        return (clamp(r), clamp(g), clamp(b))
    }
}

/// Thrown by `JPEGDecompressor` when the linked libjpeg refuses a Huffman-coded lossless frame (SOF3): the
/// coder then decodes the file with `LosslessJPEGDecoder`. Never leaves the JPEG coder.
struct LosslessJPEGRefused: Error {}

/// One scan of a lossless JPEG: every sample of its components is a Huffman-coded difference from a prediction
/// made of its already decoded neighbours (T.81 H.1.2.1): Ra left, Rb above, Rc above-left.
struct LosslessJPEGScan {
    struct Header {
        /// For each component of the scan: its index in the frame and its Huffman table.
        let components: [(index: Int, table: JPEGHuffmanLookup)]
        /// Ss: the predictor, 1...7.
        let predictor: Int
        /// Al: the point transform (samples were shifted right by it before coding).
        let pointTransform: Int

        init(_ b: [UInt8], frame: LosslessJPEGDecoder.Frame, tables: [JPEGHuffmanLookup?]) throws {
            guard let count = b.first.map(Int.init), count >= 1, count <= frame.ids.count, b.count >= 1 + 2 * count + 3 else {
                throw ImageDecodingError.corrupt("bad lossless JPEG scan header")
            }
            var components: [(index: Int, table: JPEGHuffmanLookup)] = []
            for c in 0..<count {
                guard let index = frame.ids.firstIndex(of: b[1 + 2 * c]), !components.contains(where: { $0.index == index }),
                      let table = tables[Int(b[2 + 2 * c] >> 4) & 3] else {
                    throw ImageDecodingError.corrupt("lossless JPEG scan names an unknown component or table")
                }
                components.append((index, table))
            }
            self.components = components
            predictor = Int(b[1 + 2 * count])
            pointTransform = Int(b[3 + 2 * count] & 0x0F)
            guard (1...7).contains(predictor), pointTransform < frame.precision else {
                throw ImageDecodingError.corrupt("lossless JPEG predictor \(predictor) or point transform \(pointTransform)")
            }
        }
    }

    let header: Header
    let frame: LosslessJPEGDecoder.Frame
    let restartInterval: Int
    let entropy: JPEGEntropySegments

    /// Decodes every sample of the scan's components into `planes` (reconstructed values, before the point
    /// transform is undone). Past the end of the data the bits read as zeros, as libjpeg reads them.
    mutating func decode(into planes: inout [[UInt16]]) throws {
        let width = frame.width, height = frame.height
        let initial = 1 << (frame.precision - header.pointTransform - 1)
        var bits = BitReader(bytes: entropy.bytes, start: 0, end: entropy.ends.first ?? 0)
        var segment = 0
        var mcus = 0
        // The first sample of the image or of a restart interval, and the row it starts: that row predicts
        // from the left only (H.1.2.1), its first sample from `initial`.
        var intervalX = 0, intervalY = 0
        for y in 0..<height {
            for x in 0..<width {
                if restartInterval > 0, mcus > 0, mcus % restartInterval == 0 {
                    segment += 1
                    let start = segment < entropy.starts.count ? entropy.starts[segment] : entropy.bytes.count
                    let end = segment < entropy.ends.count ? entropy.ends[segment] : entropy.bytes.count
                    bits = BitReader(bytes: entropy.bytes, start: start, end: end)
                    (intervalX, intervalY) = (x, y)
                }
                let offset = y * width + x
                for (index, table) in header.components {
                    let prediction: Int
                    if y == intervalY {
                        prediction = x == intervalX ? initial : Int(planes[index][offset - 1])
                    } else if x == 0 {
                        prediction = Int(planes[index][offset - width])
                    } else {
                        let a = Int(planes[index][offset - 1]), b = Int(planes[index][offset - width])
                        let c = Int(planes[index][offset - width - 1])
                        switch header.predictor {
                        case 1: prediction = a
                        case 2: prediction = b
                        case 3: prediction = c
                        case 4: prediction = a + b - c
                        case 5: prediction = a + ((b - c) >> 1)
                        case 6: prediction = b + ((a - c) >> 1)
                        default: prediction = (a + b) >> 1
                        }
                    }
                    let difference = try Self.difference(&bits, table)
                    planes[index][offset] = UInt16(truncatingIfNeeded: prediction + difference)
                }
                mcus += 1
            }
        }
        for index in 0..<planes.count where header.components.contains(where: { $0.index == index }) && header.pointTransform > 0 {
            let shift = UInt16(header.pointTransform)
            for i in 0..<planes[index].count { planes[index][i] <<= shift }
        }
    }

    /// One coded difference: the Huffman-coded bit count SSSS, then that many bits (16 means 32768, no bits).
    private static func difference(_ bits: inout BitReader, _ table: JPEGHuffmanLookup) throws -> Int {
        let window = bits.peek()
        let entry = table.lookup[Int(window >> UInt64(64 - JPEGHuffmanLookup.lookaheadBits))]
        let size: Int
        if entry != 0 {
            bits.skip(Int(entry & 0xFF))
            size = Int(entry >> 8)
        } else {
            guard let long = table.decodeLong(window) else { throw ImageDecodingError.corrupt("bad lossless JPEG Huffman code") }
            bits.skip(long.length)
            size = long.symbol
        }
        if size == 0 { return 0 }
        if size == 16 { return 32768 }
        let value = Int(bits.take(size))
        return value < 1 << (size - 1) ? value - (1 << size) + 1 : value
    }

    /// MSB-first bits of one restart segment; past its end, zeros.
    struct BitReader {
        let bytes: [UInt8]
        var position: Int
        let end: Int
        private var buffer: UInt64 = 0
        private var count = 0

        init(bytes: [UInt8], start: Int, end: Int) {
            self.bytes = bytes
            position = start
            self.end = min(end, bytes.count)
        }

        /// The next 64 bits, left-aligned (at least 32 of them real or zero fill).
        mutating func peek() -> UInt64 {
            while count <= 56 {
                let byte: UInt64 = position < end ? UInt64(bytes[position]) : 0
                position += 1
                buffer |= byte << UInt64(56 - count)
                count += 8
            }
            return buffer
        }

        mutating func skip(_ n: Int) {
            buffer <<= UInt64(n)
            count -= n
        }

        mutating func take(_ n: Int) -> UInt64 {
            let value = peek() >> UInt64(64 - n)
            skip(n)
            return value
        }
    }
}

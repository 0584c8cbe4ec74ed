/// Decodes a baseline (sequential Huffman) scan at 1/8 scale the way libjpeg's `scale_denom = 8` does, but
/// without evaluating what that scale throws away.
///
/// libjpeg at 1/8 needs one sample per 8×8 block (the DC coefficient: the block's mean, its 1×1 IDCT) and,
/// for 4:2:0 chroma, 2×2 samples per block (its reduced 2×2 IDCT on a few AC coefficients). Every bit of the
/// scan must still be read — Huffman codes have no other boundaries — but for DC-only blocks each AC code is
/// one table lookup that yields "bits to skip" and "coefficients to advance" together (two codes at a time
/// when they fit), on a 64-bit bit buffer refilled without branches from unstuffed, zero-padded data. The
/// lookup reads the buffer before the refill, so the loop's critical path is lookup → shift.
/// Corrupt or short data returns nil: the caller then decodes with libjpeg, which owns error semantics.
struct JPEGDCScanner {
    let header: JPEGStreamHeader
    /// Per scan component: 1 (DC only) or 2 (2×2 reduced IDCT), libjpeg's DCT scaled size at 1/8.
    let scaledSizes: [Int]

    /// Decoded samples per component, row-major, `widths[c]` × `heights[c]` (MCU-padded, before cropping).
    struct Planes {
        var samples: [[UInt8]]
        var widths: [Int]
        var heights: [Int]
    }

    func decode(_ segments: JPEGEntropySegments) -> Planes? {
        let comps = header.scanComponents.map { header.components[$0] }
        guard !comps.isEmpty, comps.count <= 3, scaledSizes.count == comps.count else { return nil }
        let interleaved = comps.count > 1
        let hMax = header.components.map(\.h).max() ?? 1, vMax = header.components.map(\.v).max() ?? 1
        let mcusWide = interleaved ? (header.width + 8 * hMax - 1) / (8 * hMax) : (header.width + 7) / 8
        let mcusHigh = interleaved ? (header.height + 8 * vMax - 1) / (8 * vMax) : (header.height + 7) / 8
        var dcTables: [JPEGHuffmanLookup] = [], acTables: [JPEGHuffmanLookup] = [], quants: [[Int32]] = []
        for component in comps {
            guard let dc = header.dcTables[component.dcTable], let ac = header.acTables[component.acTable],
                  header.quant[component.quantTable].count == 64 else { return nil }
            dcTables.append(dc)
            acTables.append(ac)
            quants.append(header.quant[component.quantTable])
        }
        let hs = comps.map { interleaved ? $0.h : 1 }, vs = comps.map { interleaved ? $0.v : 1 }
        let widths = comps.indices.map { mcusWide * hs[$0] * scaledSizes[$0] }
        let heights = comps.indices.map { mcusHigh * vs[$0] * scaledSizes[$0] }
        let restart = header.restartInterval
        if restart > 0 {
            guard segments.starts.count >= (mcusWide * mcusHigh + restart - 1) / restart else { return nil }
        }
        // The blocks of one MCU in decoding order, flattened: component, sample offset of the block inside the
        // MCU's area of that component's plane, and where that plane starts in `samples`.
        var blockComponent: [Int] = [], blockOffset: [Int] = []
        var planeStart = [Int](repeating: 0, count: comps.count)
        for c in comps.indices {
            if c > 0 { planeStart[c] = planeStart[c - 1] + widths[c - 1] * heights[c - 1] }
            for by in 0..<vs[c] {
                for bx in 0..<hs[c] {
                    blockComponent.append(c)
                    blockOffset.append(planeStart[c] + by * scaledSizes[c] * widths[c] + bx * scaledSizes[c])
                }
            }
        }
        // Per component: where its MCU number (mx, my) starts in `samples` is mx·mcuStepX + my·mcuStepY.
        let mcuStepX = comps.indices.map { hs[$0] * scaledSizes[$0] }
        let mcuStepY = comps.indices.map { vs[$0] * scaledSizes[$0] * widths[$0] }
        let size = 1 << JPEGHuffmanLookup.lookaheadBits
        let dcFlat = dcTables.flatMap(\.lookup), acFlat = acTables.flatMap(\.skip), valueFlat = acTables.flatMap(\.lookup)
        let quantFlat = quants.flatMap { $0 }

        var samples = [UInt8](repeating: 0, count: planeStart[comps.count - 1] + widths[comps.count - 1] * heights[comps.count - 1])
        var ok = true
        var predictors = [Int32](repeating: 0, count: comps.count)
        var coefficients = [Int32](repeating: 0, count: 64)
        // Everything the loop touches as raw memory: no reference counting or bounds checks per block.
        segments.bytes.withUnsafeBufferPointer { data in
        dcFlat.withUnsafeBufferPointer { dcLookup in
        acFlat.withUnsafeBufferPointer { acSkip in
        valueFlat.withUnsafeBufferPointer { acValues in
        coefficients.withUnsafeMutableBufferPointer { coef in
        quantFlat.withUnsafeBufferPointer { quantTables in
        JPEGRangeLimit.table.withUnsafeBufferPointer { rangeTable in
        samples.withUnsafeMutableBufferPointer { output in
        predictors.withUnsafeMutableBufferPointer { predictor in
        dcTables.withUnsafeBufferPointer { dcSlow in
        acTables.withUnsafeBufferPointer { acSlow in
            guard let base = data.baseAddress, let dcBase = dcLookup.baseAddress, let acBase = acSkip.baseAddress,
                  let valueBase = acValues.baseAddress, let block = coef.baseAddress,
                  let quant = quantTables.baseAddress, let range = rangeTable.baseAddress, let out = output.baseAddress,
                  let dcTable = dcSlow.baseAddress, let acTable = acSlow.baseAddress else {
                ok = false
                return
            }
            var bits = BitBuffer(base: base, start: segments.starts[0])
            var segment = 0
            var segmentEnd = segments.ends[0]
            var mcu = 0
            mcuLoop: for my in 0..<mcusHigh {
                for mx in 0..<mcusWide {
                    if restart > 0, mcu > 0, mcu % restart == 0 {
                        segment += 1
                        guard segment < segments.starts.count else { ok = false; break mcuLoop }
                        bits = BitBuffer(base: base, start: segments.starts[segment])
                        segmentEnd = segments.ends[segment]
                        predictor.update(repeating: 0)
                    }
                    for b in blockComponent.indices {
                        let c = blockComponent[b]
                        guard let diff = Self.decodeDC(&bits, dc: dcBase + c * size, table: dcTable + c) else {
                            ok = false
                            break mcuLoop
                        }
                        predictor[c] &+= diff
                        // libjpeg keeps coefficients as 16-bit JCOEF.
                        let dc = Int32(Int16(truncatingIfNeeded: predictor[c]))
                        let target = out + blockOffset[b] + mx * mcuStepX[c] + my * mcuStepY[c]
                        if scaledSizes[c] == 1 {
                            guard Self.skipAC(&bits, ac: acBase + c * size, table: acTable + c) else {
                                ok = false
                                break mcuLoop
                            }
                            // libjpeg's 1×1 IDCT: DESCALE(dc · q, 3), range-limited around 128.
                            target[0] = range[Int((dc &* quant[c * 64] &+ 4) >> 3) & 1023]
                        } else {
                            block.update(repeating: 0, count: 64)
                            block[0] = dc
                            guard Self.decodeAC(&bits, ac: valueBase + c * size, table: acTable + c, into: block) else {
                                ok = false
                                break mcuLoop
                            }
                            let samples = JPEGReducedIDCT.twoByTwo(block, quant: quant + c * 64, range: range)
                            target[0] = samples.0
                            target[1] = samples.1
                            target[widths[c]] = samples.2
                            target[widths[c] + 1] = samples.3
                        }
                    }
                    // Past the segment's data: truncated or corrupt (the padding keeps the reads in bounds).
                    if bits.bytePosition > segmentEnd { ok = false; break mcuLoop }
                    mcu += 1
                }
            }
        }
        }
        }
        }
        }
        }
        }
        }
        }
        }
        }
        guard ok else { return nil }
        let planes = comps.indices.map { Array(samples[planeStart[$0]..<(planeStart[$0] + widths[$0] * heights[$0])]) }
        return Planes(samples: planes, widths: widths, heights: heights)
    }

    /// The DC difference of one block (after a refill: ≥ 56 bits for the code ≤ 16 and magnitude ≤ 15).
    @inline(__always)
    private static func decodeDC(_ bits: inout BitBuffer, dc: UnsafePointer<UInt16>, table: UnsafePointer<JPEGHuffmanLookup>) -> Int32? {
        bits.refill()
        guard let size = decodeSymbol(&bits, dc, table), size <= 15 else { return nil }
        return size > 0 ? receiveExtend(&bits, size) : 0
    }

    /// One Huffman symbol: by lookup for codes within the lookahead, else by the canonical search.
    @inline(__always)
    private static func decodeSymbol(_ bits: inout BitBuffer, _ lookup: UnsafePointer<UInt16>,
                                     _ table: UnsafePointer<JPEGHuffmanLookup>) -> Int? {
        let entry = lookup[bits.top]
        if entry != 0 {
            bits.consume(Int(entry & 0xFF))
            return Int(entry >> 8)
        }
        guard let long = table.pointee.decodeLong(bits.buffer) else { return nil }
        bits.consume(long.length)
        return long.symbol
    }

    /// The next `size` (1...15) bits as a signed value (JPEG's RECEIVE and EXTEND).
    @inline(__always)
    private static func receiveExtend(_ bits: inout BitBuffer, _ size: Int) -> Int32 {
        let value = Int32(truncatingIfNeeded: bits.buffer &>> UInt64(64 - size))
        bits.consume(size)
        return value < (1 << (size - 1)) ? value - (1 << size) + 1 : value
    }

    /// Skips a block's AC codes. At least 25 bits are buffered at each lookup (≥ 56 after a refill, ≤ 31
    /// consumed since); the lookup reads the buffer before this iteration's refill, so the refill's load runs
    /// beside it instead of in front of it.
    @inline(__always)
    private static func skipAC(_ bits: inout BitBuffer, ac: UnsafePointer<UInt32>, table: UnsafePointer<JPEGHuffmanLookup>) -> Bool {
        var k = 1
        while k < 64 {
            let skip = ac[bits.top]
            bits.refill()
            if skip != 0 {
                let first = ACSkip.firstAdvance(skip)
                if k &+ first < 64 {
                    bits.consume(ACSkip.pairBits(skip))
                    k &+= ACSkip.pairAdvance(skip)
                } else {
                    bits.consume(ACSkip.singleBits(skip))
                    k &+= first
                }
            } else if let long = table.pointee.decodeLong(bits.buffer) {
                let r = long.symbol >> 4, s = long.symbol & 15
                bits.consume(long.length + s)
                k &+= s != 0 ? r + 1 : (r == 15 ? 16 : 64)
            } else {
                return false
            }
        }
        return true
    }

    /// Decodes a block's AC coefficients into `block` (natural order), as libjpeg's decode_mcu does.
    @inline(__always)
    private static func decodeAC(_ bits: inout BitBuffer, ac: UnsafePointer<UInt16>, table: UnsafePointer<JPEGHuffmanLookup>,
                                 into block: UnsafeMutablePointer<Int32>) -> Bool {
        var k = 1
        while k < 64 {
            bits.refill()
            guard let symbol = decodeSymbol(&bits, ac, table) else { return false }
            let r = symbol >> 4, s = symbol & 15
            if s != 0 {
                k &+= r
                block[JPEGZigzag.natural[min(k, 79)]] = receiveExtend(&bits, s)
                k &+= 1
            } else {
                if r != 15 { break }
                k &+= 16
            }
        }
        return true
    }
}

/// libjpeg's post-IDCT range limit (jdmaster.c prepare_range_limit_table), indexed by `value & 1023`:
/// -128...127 → value + 128, 128...511 → 255, -512...-129 → 0 (and wrapping beyond, as libjpeg does).
enum JPEGRangeLimit {
    static let table: [UInt8] = (0..<1024).map { i in
        switch i {
        case 0..<128: return UInt8(i + 128)
        case 128..<512: return 255
        case 512..<896: return 0
        default: return UInt8(i - 896)
        }
    }
}

/// libjpeg's reduced-size inverse DCT to 2×2 (jidctred.c `jpeg_idct_2x2`), integer for integer.
enum JPEGReducedIDCT {
    private static let constBits = 13, pass1Bits = 2
    private static let fix0720959822 = 5906, fix0850430095 = 6967, fix1272758580 = 10426, fix3624509785 = 29692

    @inline(__always)
    private static func descale(_ x: Int, _ n: Int) -> Int { (x + (1 << (n - 1))) >> n }

    /// The odd part shared by both passes: coefficients 1, 3, 5, 7 of a row or column.
    @inline(__always)
    private static func odd(_ c1: Int, _ c3: Int, _ c5: Int, _ c7: Int) -> Int {
        c7 * -fix0720959822 + c5 * fix0850430095 + c3 * -fix1272758580 + c1 * fix3624509785
    }

    /// Pass 1 for one column: its two workspace rows.
    @inline(__always)
    private static func column(_ b: UnsafeMutablePointer<Int32>, _ q: UnsafePointer<Int32>, _ c: Int) -> (Int, Int) {
        @inline(__always) func k(_ row: Int) -> Int { Int(b[row * 8 + c]) * Int(q[row * 8 + c]) }
        if b[8 + c] == 0, b[24 + c] == 0, b[40 + c] == 0, b[56 + c] == 0 {
            let dc = k(0) << pass1Bits
            return (dc, dc)
        }
        let tmp10 = k(0) << (constBits + 2), tmp0 = odd(k(1), k(3), k(5), k(7))
        return (descale(tmp10 + tmp0, constBits - pass1Bits + 2), descale(tmp10 - tmp0, constBits - pass1Bits + 2))
    }

    /// Pass 2 for one workspace row: its two output samples.
    @inline(__always)
    private static func row(_ w0: Int, _ w1: Int, _ w3: Int, _ w5: Int, _ w7: Int,
                            _ range: UnsafePointer<UInt8>) -> (UInt8, UInt8) {
        if w1 == 0, w3 == 0, w5 == 0, w7 == 0 {
            let dc = range[descale(w0, pass1Bits + 3) & 1023]
            return (dc, dc)
        }
        let tmp10 = w0 << (constBits + 2), tmp0 = odd(w1, w3, w5, w7)
        return (range[descale(tmp10 + tmp0, constBits + pass1Bits + 3 + 2) & 1023],
                range[descale(tmp10 - tmp0, constBits + pass1Bits + 3 + 2) & 1023])
    }

    /// The four samples (top-left, top-right, bottom-left, bottom-right) of one block: columns 0, 1, 3, 5, 7
    /// into a 2-row workspace, then the two rows.
    @inline(__always)
    static func twoByTwo(_ block: UnsafeMutablePointer<Int32>, quant: UnsafePointer<Int32>,
                         range: UnsafePointer<UInt8>) -> (UInt8, UInt8, UInt8, UInt8) {
        let c0 = column(block, quant, 0), c1 = column(block, quant, 1), c3 = column(block, quant, 3)
        let c5 = column(block, quant, 5), c7 = column(block, quant, 7)
        let top = row(c0.0, c1.0, c3.0, c5.0, c7.0, range)
        let bottom = row(c0.1, c1.1, c3.1, c5.1, c7.1, range)
        return (top.0, top.1, bottom.0, bottom.1)
    }
}

/// A 64-bit big-endian bit buffer over unstuffed, zero-padded bytes (F. Giesen's "variant 4" reader):
/// `refill` ORs in the next 8 bytes without a branch and leaves at least 56 valid bits, MSB first.
struct BitBuffer {
    private let base: UnsafePointer<UInt8>
    private var next: Int
    private(set) var buffer: UInt64 = 0
    private var count = 0

    init(base: UnsafePointer<UInt8>, start: Int) {
        self.base = base
        self.next = start
    }

    /// The next `JPEGHuffmanLookup.lookaheadBits` bits, as a table index.
    @inline(__always) var top: Int { Int(truncatingIfNeeded: buffer &>> UInt64(64 - JPEGHuffmanLookup.lookaheadBits)) }

    @inline(__always) mutating func refill() {
        let word = UInt64(bigEndian: UnsafeRawPointer(base + next).loadUnaligned(as: UInt64.self))
        buffer |= word &>> UInt64(count)
        next &+= (63 &- count) >> 3
        count |= 56
    }

    /// Drops `n` (≤ the valid bits) bits.
    @inline(__always) mutating func consume(_ n: Int) {
        buffer = buffer &<< UInt64(n)
        count &-= n
    }

    /// Bytes of input touched by the bits consumed so far (a partly used byte counts).
    var bytePosition: Int { (next * 8 - count + 7) / 8 }
}

/// Decodes only the DC coefficient of every block of a baseline (sequential Huffman) scan, skipping the AC
/// coefficients without evaluating them. The DC of a block is its mean, which is exactly what libjpeg's
/// 1/8 scaled IDCT outputs, so for a ≤ 1/8 thumbnail the rest of each block need not be decoded at all.
///
/// Every bit of the scan still has to be read (Huffman codes have no other boundaries); what this saves
/// over libjpeg is the per-coefficient work: each AC code is one table lookup that yields "bits to skip"
/// and "coefficients to advance" together, on a 64-bit bit buffer refilled without branches (8-byte loads
/// from unstuffed, zero-padded data). The critical path per code is one lookup and one shift.
/// Corrupt or short data returns nil: the caller then decodes with libjpeg, which owns error semantics.
struct JPEGDCScanner {
    let header: JPEGStreamHeader

    /// DC values (quantised, prediction undone) per component, row-major over each component's blocks,
    /// and the block grid size per component.
    struct Planes {
        var values: [[Int32]]
        var blocksWide: [Int]
        var blocksHigh: [Int]
    }

    func decode(_ segments: JPEGEntropySegments) -> Planes? {
        let comps = header.scanComponents.map { header.components[$0] }
        guard !comps.isEmpty, comps.count <= 3 else { return nil }
        let interleaved = comps.count > 1
        let hMax = header.components.map(\.h).max() ?? 1, vMax = header.components.map(\.v).max() ?? 1
        let mcusWide = interleaved ? (header.width + 8 * hMax - 1) / (8 * hMax) : (header.width + 7) / 8
        let mcusHigh = interleaved ? (header.height + 8 * vMax - 1) / (8 * vMax) : (header.height + 7) / 8
        let blocksWide = comps.map { interleaved ? mcusWide * $0.h : mcusWide }
        let blocksHigh = comps.map { interleaved ? mcusHigh * $0.v : mcusHigh }
        var dcTables: [JPEGHuffmanLookup] = [], acTables: [JPEGHuffmanLookup] = []
        for component in comps {
            guard let dc = header.dcTables[component.dcTable], let ac = header.acTables[component.acTable] else { return nil }
            dcTables.append(dc)
            acTables.append(ac)
        }
        let restart = header.restartInterval
        let totalMCUs = mcusWide * mcusHigh
        if restart > 0 {
            guard segments.starts.count >= (totalMCUs + restart - 1) / restart else { return nil }
        }
        // The blocks of one MCU in decoding order: component, and offset inside the component's MCU area.
        var order: [(component: Int, dx: Int, dy: Int)] = []
        for (c, component) in comps.enumerated() {
            let h = interleaved ? component.h : 1, v = interleaved ? component.v : 1
            for by in 0..<v { for bx in 0..<h { order.append((c, bx, by)) } }
        }
        // Flat lookup tables (one 2^lookahead slice per component) so the loop indexes raw memory.
        let size = 1 << JPEGHuffmanLookup.lookaheadBits
        let dcFlat = dcTables.flatMap(\.lookup), acFlat = acTables.flatMap(\.skip)

        var planes = zip(blocksWide, blocksHigh).map { [Int32](repeating: 0, count: $0 * $1) }
        var ok = true
        var predictors = [Int32](repeating: 0, count: comps.count)
        segments.bytes.withUnsafeBufferPointer { data in
        dcFlat.withUnsafeBufferPointer { dcLookup in
        acFlat.withUnsafeBufferPointer { acSkip in
            guard let base = data.baseAddress, let dcBase = dcLookup.baseAddress, let acBase = acSkip.baseAddress else {
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
                        for c in predictors.indices { predictors[c] = 0 }
                    }
                    for block in order {
                        let c = block.component
                        guard let diff = Self.decodeBlock(&bits, dc: dcBase + c * size, ac: acBase + c * size,
                                                          dcTable: dcTables[c], acTable: acTables[c]) else {
                            ok = false
                            break mcuLoop
                        }
                        predictors[c] &+= diff
                        let h = interleaved ? comps[c].h : 1, v = interleaved ? comps[c].v : 1
                        planes[c][(my * v + block.dy) * blocksWide[c] + mx * h + block.dx] = predictors[c]
                    }
                    // Past the segment's data: truncated or corrupt (the padding keeps the reads in bounds).
                    if bits.bytePosition > segmentEnd { ok = false; break mcuLoop }
                    mcu += 1
                }
            }
        }
        }
        }
        return ok ? Planes(values: planes, blocksWide: blocksWide, blocksHigh: blocksHigh) : nil
    }

    /// One block: the DC difference, then the AC codes skipped. nil on a code no table entry matches.
    @inline(__always)
    private static func decodeBlock(_ bits: inout BitBuffer, dc: UnsafePointer<UInt16>, ac: UnsafePointer<UInt32>,
                                    dcTable: JPEGHuffmanLookup, acTable: JPEGHuffmanLookup) -> Int32? {
        bits.refill()   // ≥ 56 valid bits: enough for a DC code (≤ 16) and its magnitude (≤ 15)
        let entry = dc[bits.top]
        var size: Int
        if entry != 0 {
            bits.consume(Int(entry & 0xFF))
            size = Int(entry >> 8)
        } else {
            guard let long = dcTable.decodeLong(bits.buffer) else { return nil }
            bits.consume(long.length)
            size = long.symbol
        }
        guard size <= 15 else { return nil }
        var diff: Int32 = 0
        if size > 0 {
            let value = Int32(truncatingIfNeeded: bits.buffer &>> UInt64(64 - size))
            bits.consume(size)
            diff = value < (1 << (size - 1)) ? value - (1 << size) + 1 : value
        }
        // At least 25 bits are buffered at each lookup (≥ 56 after a refill, ≤ 31 consumed since). The lookup
        // reads the buffer before this iteration's refill, so the load of the refill runs beside it instead
        // of in front of it: the loop's critical path is lookup → shift.
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
            } else if let long = acTable.decodeLong(bits.buffer) {
                let r = long.symbol >> 4, s = long.symbol & 15
                bits.consume(long.length + s)
                k &+= s != 0 ? r + 1 : (r == 15 ? 16 : 64)
            } else {
                return nil
            }
        }
        return diff
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

    /// Bytes of input fully consumed so far (bits still buffered are not counted).
    var bytePosition: Int { next - (count + 7) / 8 }
}

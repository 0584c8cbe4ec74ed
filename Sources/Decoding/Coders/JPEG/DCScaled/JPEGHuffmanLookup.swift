/// One JPEG Huffman table prepared for the DC-only scanner: a direct lookup on the next `lookaheadBits`
/// bits for short codes, and the canonical (maxcode/valptr) search for longer ones.
struct JPEGHuffmanLookup {
    static let lookaheadBits = 11

    /// For each `lookaheadBits`-bit prefix: code length in the low byte, symbol in the high byte;
    /// 0 when the code is longer than the lookahead (use `decodeLong`).
    let lookup: [UInt16]
    /// For AC tables, what to skip for the one or two codes at the front of each prefix (`ACSkip`); 0 when
    /// the first code is longer than the lookahead.
    let skip: [UInt32]
    /// Canonical decoding for codes of 1...16 bits: largest code of each length (-1 when none), and the
    /// index of the first symbol of that length minus the first code.
    private let maxCode: [Int32]
    private let valueOffset: [Int32]
    let symbols: [UInt8]

    init?(counts: [Int], symbols: [UInt8]) {
        guard counts.count == 16 else { return nil }
        let size = 1 << Self.lookaheadBits
        var lookup = [UInt16](repeating: 0, count: size)
        var maxCode = [Int32](repeating: -1, count: 17)
        var valueOffset = [Int32](repeating: 0, count: 17)
        var code = 0, k = 0
        for length in 1...16 {
            let n = counts[length - 1]
            valueOffset[length] = Int32(k - code)
            for _ in 0..<n {
                // A complete prefix code never runs out of codes of a length; a malformed (over-full) table does.
                guard k < symbols.count, code < 1 << length else { return nil }
                if length <= Self.lookaheadBits {
                    let symbol = Int(symbols[k])
                    let first = code << (Self.lookaheadBits - length)
                    let entry = UInt16(length | symbol << 8)
                    for j in first..<(first + (1 << (Self.lookaheadBits - length))) { lookup[j] = entry }
                }
                code += 1
                k += 1
            }
            if n > 0 { maxCode[length] = Int32(code - 1) }
            code <<= 1
        }
        self.lookup = lookup
        self.skip = ACSkip.table(lookup)
        self.maxCode = maxCode
        self.valueOffset = valueOffset
        self.symbols = symbols
    }

    /// Decodes a code longer than the lookahead from the top bits of `window` (at least 16 valid bits):
    /// (symbol, code length), or nil for a bit pattern no code matches (corrupt data).
    func decodeLong(_ window: UInt64) -> (symbol: Int, length: Int)? {
        for length in (Self.lookaheadBits + 1)...16 {
            let code = Int32(truncatingIfNeeded: window >> UInt64(64 - length))
            if code <= maxCode[length] {
                let index = Int(code + valueOffset[length])
                guard index >= 0, index < symbols.count else { return nil }
                return (Int(symbols[index]), length)
            }
        }
        return nil
    }
}

/// Skip entries for AC codes, two at a time where both fit the lookahead. Bits 0-5: bits of both codes with
/// their magnitude bits; 6-10: bits of the first alone; 11-17: coefficient advance of the first (run + 1,
/// 16 for ZRL, 64 for end-of-block); 18-25: advance of both. Without a second code the "both" fields equal
/// the first's. The scanner takes both only while the first leaves the block unfinished, since a block
/// that ends without EOB (coefficient 63 set) is followed directly by the next block's DC code.
enum ACSkip {
    @inline(__always) static func pairBits(_ e: UInt32) -> Int { Int(e & 63) }
    @inline(__always) static func singleBits(_ e: UInt32) -> Int { Int((e >> 6) & 31) }
    @inline(__always) static func firstAdvance(_ e: UInt32) -> Int { Int((e >> 11) & 127) }
    @inline(__always) static func pairAdvance(_ e: UInt32) -> Int { Int((e >> 18) & 255) }

    static func advance(_ symbol: Int) -> Int {
        let r = symbol >> 4, s = symbol & 15
        return s != 0 ? r + 1 : (r == 15 ? 16 : 64)
    }

    static func table(_ lookup: [UInt16]) -> [UInt32] {
        let bits = JPEGHuffmanLookup.lookaheadBits, mask = (1 << bits) - 1
        return (0..<lookup.count).map { index -> UInt32 in
            let first = lookup[index]
            guard first != 0 else { return 0 }
            let length = Int(first & 0xFF), symbol = Int(first >> 8)
            let single = length + (symbol & 15), advance = Self.advance(symbol)
            var pair = single, both = advance
            if advance < 64, single < bits {
                // The second code starts `single` bits in; known only if it fits in the rest of the lookahead.
                let second = lookup[(index << single) & mask]
                let secondLength = Int(second & 0xFF)
                if second != 0, secondLength <= bits - single {
                    pair = single + secondLength + Int(second >> 8) & 15
                    both = advance + Self.advance(Int(second >> 8))
                }
            }
            return UInt32(pair) | UInt32(single) << 6 | UInt32(advance) << 11 | UInt32(both) << 18
        }
    }
}

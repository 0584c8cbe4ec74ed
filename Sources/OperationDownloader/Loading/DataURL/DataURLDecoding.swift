import Foundation

/// The byte-level rules behind `DataURL`: percent escapes, then base64 ("forgiving": ASCII whitespace
/// ignored, `=` padding optional but only at the end, at most two, and then the length a multiple of 4).
/// Plain loops over a buffer with a lookup table: a payload may be hundreds of megabytes.
enum DataURLDecoding {
    /// `base64Table` values that are not sextets.
    static let whitespace: UInt8 = 64
    static let padding: UInt8 = 65
    static let invalid: UInt8 = 0xFF

    /// Per byte: its 6-bit value in the base64 alphabet (`+` and `/`), or `whitespace`, `padding`, `invalid`.
    static let base64Table: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        switch byte {
        case 0x41...0x5A: return UInt8(byte - 0x41)       // A-Z
        case 0x61...0x7A: return UInt8(byte - 0x61 + 26)  // a-z
        case 0x30...0x39: return UInt8(byte - 0x30 + 52)  // 0-9
        case 0x2B: return 62                               // +
        case 0x2F: return 63                               // /
        case 0x20, 0x09, 0x0A, 0x0C, 0x0D: return whitespace
        case 0x3D: return padding                          // =
        default: return invalid
        }
    }

    /// The byte at `index`, a `%XX` escape decoded (a `%` without two hex digits stays as it is, the WHATWG
    /// percent-decode); `index` moves past what was read.
    @inline(__always)
    static func next(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> UInt8 {
        let byte = bytes[index]
        index += 1
        guard byte == UInt8(ascii: "%"), index + 1 < bytes.count,
              let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else { return byte }
        index += 2
        return high << 4 | low
    }

    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// What the percent-decoded `bytes` hold: their count, or (base64) the count they decode to; or what is
    /// wrong with them.
    static func count(_ bytes: UnsafeBufferPointer<UInt8>, base64: Bool) -> Result<Int, DataURL.Failure> {
        var index = 0
        var count = 0
        guard base64 else {
            while index < bytes.count {
                _ = next(bytes, &index)
                count += 1
            }
            return .success(count)
        }
        var pads = 0
        let table = base64Table
        return table.withUnsafeBufferPointer { table in
            while index < bytes.count {
                let offset = index
                let value = next(bytes, &index)
                let kind = table[Int(value)]
                if kind < 64 {
                    if pads > 0 { return .failure(problem("data after '='", at: offset)) }
                    count += 1
                } else if kind == Self.padding {
                    pads += 1
                    if pads > 2 { return .failure(problem("more than two '=' at the end", at: offset)) }
                } else if kind != Self.whitespace {
                    let shown = value >= 0x21 && value < 0x7F
                        ? "'\(Character(Unicode.Scalar(value)))'" : "byte 0x\(String(value, radix: 16))"
                    return .failure(problem("\(shown) is not a base64 character", at: offset))
                }
            }
            if pads > 0 && (count + pads) % 4 != 0 || count % 4 == 1 {
                return .failure(DataURL.Failure(
                    description: "data: URL: invalid base64 (\(count) characters\(pads > 0 ? " and \(pads) '='" : "") cannot be base64)"))
            }
            return .success(count / 4 * 3 + max(0, count % 4 - 1))
        }
    }

    private static func problem(_ what: String, at offset: Int) -> DataURL.Failure {
        DataURL.Failure(description: "data: URL: invalid base64 (\(what), at offset \(offset))")
    }

    /// Decodes `bytes` (checked by `count`) into pieces of exactly `chunkSize` bytes (the last may be shorter),
    /// handing each to `deliver`, which returns false to stop.
    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, base64: Bool, chunkSize: Int, deliver: (Data) -> Bool
    ) {
        let size = max(1, chunkSize)
        var output = [UInt8](repeating: 0, count: size)
        let table = base64Table
        output.withUnsafeMutableBufferPointer { out in
            table.withUnsafeBufferPointer { table in
                var filled = 0
                var index = 0
                var bits: UInt32 = 0
                var sextets = 0
                /// Writes one byte; false once `deliver` asked to stop.
                @inline(__always) func put(_ byte: UInt8) -> Bool {
                    out[filled] = byte
                    filled += 1
                    guard filled == size else { return true }
                    filled = 0
                    return deliver(Data(out))
                }
                while index < bytes.count {
                    let value = next(bytes, &index)
                    guard base64 else {
                        if !put(value) { return }
                        continue
                    }
                    let sextet = table[Int(value)]
                    guard sextet < 64 else { continue }  // whitespace and padding
                    bits = bits << 6 | UInt32(sextet)
                    sextets += 1
                    guard sextets == 4 else { continue }
                    sextets = 0
                    guard put(UInt8(truncatingIfNeeded: bits >> 16)), put(UInt8(truncatingIfNeeded: bits >> 8)),
                          put(UInt8(truncatingIfNeeded: bits)) else { return }
                }
                // The last one or two bytes of unpadded (or padded) base64; extra low bits are dropped.
                if sextets == 2 {
                    guard put(UInt8(truncatingIfNeeded: bits >> 4)) else { return }
                } else if sextets == 3 {
                    guard put(UInt8(truncatingIfNeeded: bits >> 10)), put(UInt8(truncatingIfNeeded: bits >> 2)) else { return }
                }
                if filled > 0 { _ = deliver(Data(UnsafeBufferPointer(rebasing: out[0..<filled]))) }
            }
        }
    }
}

import Foundation

/// A minimal little-endian TIFF writer for tests: one directory, one uncompressed strip holding `data`.
enum TIFFBuilder {
    /// A TIFF of `width` x `height` with the given samples (already packed) and tags; `strips` equal strips
    /// (the height must divide evenly), each with its own offset and byte count.
    static func file(width: Int, height: Int, bitsPerSample: [Int], photometric: Int, sampleFormat: Int? = nil,
                     extraSamples: [Int]? = nil, strips: Int = 1, data: [UInt8]) -> Data {
        let samples = bitsPerSample.count
        let stripBytes = data.count / strips
        var tags: [(tag: Int, type: Int, values: [Int])] = [
            (256, 4, [width]), (257, 4, [height]), (258, 3, bitsPerSample), (259, 3, [1]), (262, 3, [photometric]),
            (273, 4, Array(repeating: 0, count: strips)), (277, 3, [samples]), (278, 4, [height / strips]),
            (279, 4, Array(repeating: stripBytes, count: strips)), (284, 3, [1]),
        ]
        if let extraSamples { tags.append((338, 3, extraSamples)) }
        if let sampleFormat { tags.append((339, 3, Array(repeating: sampleFormat, count: samples))) }
        let ifdSize = 2 + tags.count * 12 + 4
        var outside: [UInt8] = []
        var entries: [UInt8] = []
        let outsideStart = 8 + ifdSize
        // Out-of-line values (SHORT arrays longer than 2, LONG arrays longer than 1), then the strips.
        let outsideSize = tags.reduce(0) { size, tag in
            size + (tag.type == 3 && tag.values.count > 2 ? tag.values.count * 2 : tag.type == 4 && tag.values.count > 1 ? tag.values.count * 4 : 0)
        }
        let dataAt = outsideStart + outsideSize
        for (tag, type, values) in tags {
            var field: [UInt8]
            let value = tag == 273 ? (0..<strips).map { dataAt + $0 * stripBytes } : values
            if type == 3 && value.count > 2 {
                field = le32(outsideStart + outside.count)
                for v in value { outside += le16(v) }
            } else if type == 4 && value.count > 1 {
                field = le32(outsideStart + outside.count)
                for v in value { outside += le32(v) }
            } else if type == 3 {
                field = value.flatMap(le16) + Array(repeating: 0, count: 4 - 2 * value.count)
            } else {
                field = le32(value[0])
            }
            entries += le16(tag) + le16(type) + le32(value.count) + field
        }
        let bytes: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(tags.count) + entries + le32(0) + outside + data
        return Data(bytes)
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }

    /// Samples packed MSB-first at `bits` each (12-bit and other non-byte depths); the caller pads rows.
    static func packBits(_ samples: [Int], bits: Int) -> [UInt8] {
        var out: [UInt8] = []
        var accumulator = 0, count = 0
        for sample in samples {
            accumulator = (accumulator << bits) | (sample & ((1 << bits) - 1))
            count += bits
            while count >= 8 {
                out.append(UInt8((accumulator >> (count - 8)) & 0xFF))
                count -= 8
                accumulator &= (1 << count) - 1
            }
        }
        if count > 0 { out.append(UInt8((accumulator << (8 - count)) & 0xFF)) }
        return out
    }
}

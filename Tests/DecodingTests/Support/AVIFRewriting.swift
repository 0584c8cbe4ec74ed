import Foundation
@testable import Decoding

/// Edits of `avifenc` output for the tests: the shapes of files seen in the wild that `avifenc` does not write.
enum AVIFRewriting {
    private static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    private static func read(_ b: [UInt8], _ at: Int, _ size: Int) -> Int {
        (0..<size).reduce(0) { $0 << 8 | Int(b[at + $1]) }
    }

    private static func write(_ b: inout [UInt8], _ at: Int, _ size: Int, _ value: Int) {
        for i in 0..<size { b[at + i] = UInt8(value >> (8 * (size - 1 - i)) & 0xFF) }
    }

    /// The file with its one `ipma` box split into two of the same version and flags, the first item's
    /// associations in one and the others' in the second (HEIF allows one per version/flags pair; some writers
    /// make two, and libavif refuses them). Sizes of the enclosing boxes and `iloc` offsets into `mdat` are
    /// moved to match. Nil when the file has no ipma with two items or more.
    static func splittingIPMA(_ data: Data) -> Data? {
        var b = [UInt8](data)
        typealias Boxes = (meta: ISOBMFFBoxes.Box, iprp: ISOBMFFBoxes.Box, ipma: ISOBMFFBoxes.Box, iloc: ISOBMFFBoxes.Box)
        let found = b.withUnsafeBytes { bytes -> Boxes? in
            guard let meta = ISOBMFFBoxes.first("meta", in: bytes) else { return nil }
            let children = meta.payload.lowerBound + 4..<meta.payload.upperBound  // a full box
            guard let iprp = ISOBMFFBoxes.first("iprp", in: bytes, range: children),
                  let ipma = ISOBMFFBoxes.first("ipma", in: bytes, range: iprp.payload),
                  let iloc = ISOBMFFBoxes.first("iloc", in: bytes, range: children) else { return nil }
            return (meta, iprp, ipma, iloc)
        }
        guard let found else { return nil }
        let (meta, iprp, ipma, iloc) = found
        let p = ipma.payload.lowerBound
        let version = b[p], flags = read(b, p + 1, 3)
        let count = read(b, p + 4, 4)
        guard count >= 2 else { return nil }
        // Entries: item_ID (16 bits, 32 from version 1), association count, associations (1 or 2 bytes each).
        var entries: [ArraySlice<UInt8>] = []
        var at = p + 8
        for _ in 0..<count {
            let start = at
            at += version == 0 ? 2 : 4
            let associations = Int(b[at])
            at += 1 + associations * (flags & 1 != 0 ? 2 : 1)
            entries.append(b[start..<at])
        }
        func box(_ group: ArraySlice<ArraySlice<UInt8>>) -> [UInt8] {
            let payload = [version] + Array(b[p + 1..<p + 4]) + be32(group.count) + group.flatMap { $0 }
            return be32(8 + payload.count) + Array("ipma".utf8) + payload
        }
        let replacement = box(entries[0..<1]) + box(entries[1...])
        let delta = replacement.count - (ipma.payload.upperBound - ipma.start)
        // iloc: offsets into the file (construction method 0) move with everything after the meta box.
        let l = iloc.payload.lowerBound
        let ilocVersion = b[l]
        let offsetSize = Int(b[l + 4] >> 4), lengthSize = Int(b[l + 4] & 15), baseSize = Int(b[l + 5] >> 4)
        let indexSize = ilocVersion >= 1 ? Int(b[l + 5] & 15) : 0
        at = l + 6
        let items = ilocVersion < 2 ? read(b, at, 2) : read(b, at, 4)
        at += ilocVersion < 2 ? 2 : 4
        for _ in 0..<items {
            at += ilocVersion < 2 ? 2 : 4
            var method = 0
            if ilocVersion >= 1 {
                method = read(b, at, 2) & 15
                at += 2
            }
            at += 2  // data_reference_index
            let baseAt = at
            at += baseSize
            let extents = read(b, at, 2)
            at += 2
            if method == 0 && baseSize > 0 { write(&b, baseAt, baseSize, read(b, baseAt, baseSize) + delta) }
            for _ in 0..<extents {
                at += indexSize
                if method == 0 && baseSize == 0 && offsetSize > 0 { write(&b, at, offsetSize, read(b, at, offsetSize) + delta) }
                at += offsetSize + lengthSize
            }
        }
        b.replaceSubrange(ipma.start..<ipma.payload.upperBound, with: replacement)
        write(&b, meta.start, 4, read(b, meta.start, 4) + delta)
        write(&b, iprp.start, 4, read(b, iprp.start, 4) + delta)
        return Data(b)
    }

    /// The file with every `ispe` (image spatial extents) property saying `width`×`height`: a header that lies
    /// about the picture's size.
    static func settingISPE(_ data: Data, width: Int, height: Int) -> Data {
        var b = [UInt8](data)
        var at = 0
        while let range = b[at...].firstRange(of: Array("ispe".utf8)) {
            let payload = range.upperBound + 4  // after version and flags
            guard payload + 8 <= b.count else { break }
            write(&b, payload, 4, width)
            write(&b, payload + 4, 4, height)
            at = payload + 8
        }
        return Data(b)
    }
}

import Foundation

/// An ICC profile's header and tag table, read without lcms2 (ICC.1:2010 §7): enough to decide whether the
/// matrix/TRC fast path can convert it (`MatrixTRCProfile`) and to read the tags it needs.
///
/// Every offset and length is checked against the bytes: a hostile profile is a typed `ICCProfileError`, never
/// a trap. The rules follow lcms2's reader (cmsio0.c) so both accept the same profiles: the `acsp` signature is
/// required, at most 100 tags, a tag that points outside the profile is ignored, the first of two tags with
/// the same signature wins, and a declared size larger than the bytes is cut to the bytes.
struct ICCProfile {
    /// Four-character codes (big-endian), e.g. `rXYZ`.
    struct Signature: Hashable, CustomStringConvertible {
        let rawValue: UInt32

        init(_ code: String) {
            var value: UInt32 = 0
            for byte in code.utf8.prefix(4) { value = value << 8 | UInt32(byte) }
            rawValue = value
        }

        init(rawValue: UInt32) { self.rawValue = rawValue }

        var description: String {
            let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }
            return String(decoding: bytes.map { (32...126).contains($0) ? $0 : 63 }, as: UTF8.self)
        }
    }

    /// lcms2's MAX_TABLE_TAG.
    static let maximumTagCount = 100
    static let headerSize = 128

    let bytes: [UInt8]
    /// The major version (2 or 4 in practice).
    let majorVersion: Int
    let deviceClass: Signature
    let colorSpace: Signature
    let connectionSpace: Signature
    /// Tag signature to the bytes range of its data (within `bytes`).
    let tags: [Signature: Range<Int>]

    init(_ data: Data) throws(ICCProfileError) {
        let bytes = [UInt8](data)
        guard bytes.count >= Self.headerSize + 4 else { throw .tooShort(bytes.count) }
        let reader = ICCByteReader(bytes: bytes)
        guard reader.uint32(at: 36) == Signature("acsp").rawValue else { throw .notAProfile }
        // The declared size may exceed the bytes (lcms2 trusts the bytes) but not fall inside the header.
        let declared = Int(reader.uint32(at: 0) ?? 0)
        let end = min(declared, bytes.count)
        guard end >= Self.headerSize + 4 else { throw .badSize(declared) }
        majorVersion = Int(bytes[8])
        deviceClass = Signature(rawValue: reader.uint32(at: 12) ?? 0)
        colorSpace = Signature(rawValue: reader.uint32(at: 16) ?? 0)
        connectionSpace = Signature(rawValue: reader.uint32(at: 20) ?? 0)
        let count = Int(reader.uint32(at: 128) ?? 0)
        guard count <= Self.maximumTagCount else { throw .tooManyTags(count) }
        var tags: [Signature: Range<Int>] = [:]
        for index in 0..<count {
            let entry = 132 + index * 12
            guard let signature = reader.uint32(at: entry), let offset = reader.uint32(at: entry + 4),
                  let size = reader.uint32(at: entry + 8), entry + 12 <= end else {
                throw .truncatedTagTable(declared: count)
            }
            let start = Int(offset), length = Int(size)
            // As lcms2: a tag outside the profile is skipped, not fatal (the profile may not need it).
            guard length > 0, start >= Self.headerSize, start + length <= end else { continue }
            let key = Signature(rawValue: signature)
            if tags[key] == nil { tags[key] = start..<(start + length) }
        }
        self.bytes = bytes
        self.tags = tags
    }

    /// The data of tag `signature`, or nil when the profile does not have it.
    func tag(_ signature: Signature) -> ICCByteReader? {
        tags[signature].map { ICCByteReader(bytes: bytes, range: $0) }
    }

    func has(_ signature: Signature) -> Bool { tags[signature] != nil }
}

/// Big-endian reads inside one range of the profile's bytes; nil past its end (never a trap).
struct ICCByteReader {
    let bytes: [UInt8]
    let range: Range<Int>

    init(bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        self.range = range ?? 0..<bytes.count
    }

    var count: Int { range.count }

    /// The tag's type signature (its first four bytes).
    var typeSignature: ICCProfile.Signature? { uint32(at: 0).map(ICCProfile.Signature.init(rawValue:)) }

    func uint32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset <= count - 4 else { return nil }
        let i = range.lowerBound + offset
        return UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
    }

    func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset <= count - 2 else { return nil }
        let i = range.lowerBound + offset
        return UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
    }

    /// s15Fixed16Number.
    func s15Fixed16(at offset: Int) -> Double? {
        uint32(at: offset).map { Double(Int32(bitPattern: $0)) / 65536 }
    }

    func slice(_ offset: Int, _ length: Int) -> ArraySlice<UInt8>? {
        guard offset >= 0, length >= 0, offset <= count - length else { return nil }
        let start = range.lowerBound + offset
        return bytes[start..<(start + length)]
    }
}

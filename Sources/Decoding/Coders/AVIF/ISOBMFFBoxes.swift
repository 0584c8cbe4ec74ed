/// The boxes of one ISOBMFF container level (ISO/IEC 14496-12 4.2) inside a byte range: type and payload, in
/// order. Never reads outside `range`; a box whose size runs past the end, or is smaller than its header, ends the
/// walk (`isTruncated` / `isMalformed` say which). Each step advances by at least 8 bytes, so the walk is bounded.
struct ISOBMFFBoxes: Sequence, IteratorProtocol {
    struct Box {
        /// Where the box starts (its size field); the type is 4 bytes further on.
        let start: Int
        /// The four-character type, e.g. "moov".
        let type: String
        /// The payload: after the header (and, for a full box, not skipping its version and flags).
        let payload: Range<Int>
    }

    private let bytes: UnsafeRawBufferPointer
    private let end: Int
    private var offset: Int
    private(set) var isTruncated = false
    private(set) var isMalformed = false

    init(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>? = nil) {
        self.bytes = bytes
        let whole = 0..<bytes.count
        let clamped = range.map { $0.clamped(to: whole) } ?? whole
        offset = clamped.lowerBound
        end = clamped.upperBound
    }

    mutating func next() -> Box? {
        guard offset < end else { return nil }
        guard end - offset >= 8 else {
            isTruncated = true
            return nil
        }
        var size = Int(Self.u32(bytes, offset))
        let type = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8]), as: UTF8.self)
        var header = 8
        if size == 1 {  // a 64-bit "largesize" follows the type
            guard end - offset >= 16 else {
                isTruncated = true
                return nil
            }
            let large = Self.u64(bytes, offset + 8)
            guard large <= UInt64(Int.max) else {
                isMalformed = true
                return nil
            }
            size = Int(large)
            header = 16
        } else if size == 0 {  // to the end of the enclosing range
            size = end - offset
        }
        guard size >= header else {
            isMalformed = true
            return nil
        }
        guard size <= end - offset else {
            isTruncated = true
            return nil
        }
        let box = Box(start: offset, type: type, payload: offset + header..<offset + size)
        offset += size
        return box
    }

    /// The first box of `type` in `range`, or nil.
    static func first(_ type: String, in bytes: UnsafeRawBufferPointer, range: Range<Int>? = nil) -> Box? {
        var boxes = ISOBMFFBoxes(bytes, in: range)
        while let box = boxes.next() {
            if box.type == type { return box }
        }
        return nil
    }

    static func u32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
    }

    static func u64(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(u32(b, at)) << 32 | UInt64(u32(b, at + 4))
    }
}

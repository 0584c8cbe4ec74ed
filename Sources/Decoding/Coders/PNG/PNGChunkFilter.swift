/// A PNG chunk type, as its four ASCII letters read big-endian ("IHDR" = 0x49484452).
struct PNGChunkType: Equatable, Hashable, CustomStringConvertible {
    let rawValue: UInt32

    init(rawValue: UInt32) { self.rawValue = rawValue }

    init(_ name: StaticString) {
        var value: UInt32 = 0
        name.withUTF8Buffer { for byte in $0.prefix(4) { value = value << 8 | UInt32(byte) } }
        rawValue = value
    }

    static let IHDR = PNGChunkType("IHDR")
    static let PLTE = PNGChunkType("PLTE")
    static let tRNS = PNGChunkType("tRNS")
    static let IDAT = PNGChunkType("IDAT")
    static let IEND = PNGChunkType("IEND")
    static let eXIf = PNGChunkType("eXIf")
    static let acTL = PNGChunkType("acTL")
    static let fcTL = PNGChunkType("fcTL")
    static let fdAT = PNGChunkType("fdAT")
    static let iCCP = PNGChunkType("iCCP")
    static let sRGB = PNGChunkType("sRGB")
    static let gAMA = PNGChunkType("gAMA")
    static let cHRM = PNGChunkType("cHRM")

    /// Bit 5 of the first letter: lower case means ancillary (safe to ignore).
    var isAncillary: Bool { rawValue & 0x2000_0000 != 0 }

    /// All four bytes are ASCII letters, as the PNG specification requires.
    var isWellFormed: Bool {
        (0..<4).allSatisfy { shift in
            let byte = UInt8(truncatingIfNeeded: rawValue >> (UInt32(shift) * 8))
            return (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }

    var description: String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - UInt32($0) * 8)) }, as: UTF8.self)
    }
}

/// Receives what `PNGChunkFilter` makes of the byte stream, in stream order.
protocol PNGChunkSink: AnyObject {
    /// Bytes for libpng: the signature and every chunk libpng needs, unchanged.
    func pngPass(_ bytes: UnsafeRawBufferPointer) throws
    /// A chunk header was read (every chunk, passed, captured or skipped).
    func pngChunkBegins(_ type: PNGChunkType, length: Int) throws
    /// The complete data of a captured chunk (CRC not checked). For chunks that are also passed to
    /// libpng this comes before the chunk's bytes are passed.
    func pngChunk(_ type: PNGChunkType, data: [UInt8]) throws
}

/// Follows the chunk structure of a PNG stream as bytes arrive in arbitrary pieces, and sits in front of
/// libpng: it hands libpng only the chunks that shape RGBA pixels (IHDR, PLTE, tRNS, IDAT, IEND and any
/// unknown critical chunk, so libpng still rejects those), captures what Swift reads itself (IHDR for the
/// dimension check before any allocation, eXIf, the APNG chunks, the colour chunks iCCP/sRGB/gAMA/cHRM) and
/// drops every other ancillary chunk.
///
/// Why filter rather than let libpng skip: libpng's push reader buffers a whole ancillary chunk before
/// discarding it, so a hostile multi-megabyte text or ICC chunk would cost that much memory.
/// Anything it cannot follow (bad signature, bad length, malformed type) is passed on unchanged from
/// that point, for libpng to report.
struct PNGChunkFilter {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Captured chunks larger than this are skipped (eXIf) or handed to libpng uncaptured (IHDR, PLTE, tRNS).
    static let maximumSmallChunk = 1024
    static let maximumEXIF = 1 << 20

    private enum Disposition { case pass, captureAndPass, capture, skip }

    private enum State {
        case signature(matched: Int)
        case header
        case body(remaining: Int)
        case crc(remaining: Int)
        case passAll
        case ended
    }

    private var state = State.signature(matched: 0)
    private var header: [UInt8] = []
    private var chunkType = PNGChunkType(rawValue: 0)
    private var disposition = Disposition.skip
    /// Body (and for captureAndPass the whole chunk) of the chunk being captured.
    private var captured: [UInt8] = []

    /// Whether IEND has been read.
    var hasEnded: Bool {
        if case .ended = state { return true }
        return false
    }

    mutating func consume(_ input: UnsafeRawBufferPointer, sink: some PNGChunkSink) throws {
        var offset = 0
        let count = input.count
        // Each iteration consumes at least one byte or changes state to one that does: bounded by count.
        while offset < count {
            switch state {
            case .ended:
                return
            case .passAll:
                try sink.pngPass(UnsafeRawBufferPointer(rebasing: input[offset..<count]))
                return
            case .signature(let matched):
                let take = min(8 - matched, count - offset)
                let slice = input[offset..<offset + take]
                if !slice.elementsEqual(Self.signature[matched..<matched + take]) {
                    state = .passAll  // not a PNG: libpng says why
                    if matched > 0 { try Self.signature.prefix(matched).withUnsafeBytes { try sink.pngPass($0) } }
                    continue
                }
                try sink.pngPass(UnsafeRawBufferPointer(rebasing: slice))
                offset += take
                state = matched + take == 8 ? .header : .signature(matched: matched + take)
            case .header:
                let take = min(8 - header.count, count - offset)
                header.append(contentsOf: input[offset..<offset + take])
                offset += take
                if header.count == 8 { try beginChunk(sink: sink) }
            case .body(let remaining):
                let take = min(remaining, count - offset)
                let slice = UnsafeRawBufferPointer(rebasing: input[offset..<offset + take])
                switch disposition {
                case .pass: try sink.pngPass(slice)
                case .capture, .captureAndPass: captured.append(contentsOf: slice)
                case .skip: break
                }
                offset += take
                state = remaining - take == 0 ? .crc(remaining: 4) : .body(remaining: remaining - take)
            case .crc(let remaining):
                let take = min(remaining, count - offset)
                let slice = UnsafeRawBufferPointer(rebasing: input[offset..<offset + take])
                switch disposition {
                case .pass: try sink.pngPass(slice)
                case .captureAndPass: header.append(contentsOf: slice)  // CRC kept after the header bytes
                case .capture, .skip: break
                }
                offset += take
                if remaining - take == 0 { try endChunk(sink: sink) } else { state = .crc(remaining: remaining - take) }
            }
        }
    }

    private mutating func beginChunk(sink: some PNGChunkSink) throws {
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        chunkType = PNGChunkType(rawValue: UInt32(header[4]) << 24 | UInt32(header[5]) << 16
            | UInt32(header[6]) << 8 | UInt32(header[7]))
        guard length <= 0x7FFF_FFFF, chunkType.isWellFormed else {
            state = .passAll  // libpng reports the bad length or chunk name
            try header.withUnsafeBytes { try sink.pngPass($0) }
            header.removeAll(keepingCapacity: true)
            return
        }
        try sink.pngChunkBegins(chunkType, length: length)
        switch chunkType {
        case .IHDR, .PLTE, .tRNS:
            disposition = length <= Self.maximumSmallChunk ? .captureAndPass : .pass
        case .IDAT, .IEND:
            disposition = .pass
        case .acTL, .fcTL:
            disposition = length <= Self.maximumSmallChunk ? .capture : .skip
        case .fdAT:
            disposition = .capture
        case .eXIf:
            disposition = length <= Self.maximumEXIF ? .capture : .skip
        case .iCCP:
            disposition = length <= PNGColorChunks.maximumCompressedProfile ? .capture : .skip
        case .sRGB, .gAMA, .cHRM:
            disposition = length <= Self.maximumSmallChunk ? .capture : .skip
        default:
            disposition = chunkType.isAncillary ? .skip : .pass
        }
        captured.removeAll(keepingCapacity: true)
        if disposition == .capture { captured.reserveCapacity(min(length, 1 << 20)) }
        if disposition == .pass { try header.withUnsafeBytes { try sink.pngPass($0) } }
        if disposition != .captureAndPass { header.removeAll(keepingCapacity: true) }
        state = length == 0 ? .crc(remaining: 4) : .body(remaining: length)
    }

    private mutating func endChunk(sink: some PNGChunkSink) throws {
        switch disposition {
        case .capture:
            try sink.pngChunk(chunkType, data: captured)
        case .captureAndPass:
            try sink.pngChunk(chunkType, data: captured)
            // header holds length+type+CRC: reassemble the chunk as it was.
            var chunk = Array(header.prefix(8))
            chunk.append(contentsOf: captured)
            chunk.append(contentsOf: header.dropFirst(8))
            try chunk.withUnsafeBytes { try sink.pngPass($0) }
        case .pass, .skip:
            break
        }
        header.removeAll(keepingCapacity: true)
        captured.removeAll(keepingCapacity: true)
        state = chunkType == .IEND ? .ended : .header
    }
}

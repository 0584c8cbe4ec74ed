import Foundation

/// The RIFF structure of a WebP file, parsed in Swift: still or animated, canvas size, EXIF, and the
/// animation frames (ANMF) with their placement, timing and blend/dispose flags.
///
/// Works on a prefix too: parsing stops at the first chunk that is not complete and sets `isTruncated`,
/// so the incremental decoder can use whatever frames have fully arrived.
struct WebPContainer {
    /// VP8X flag bits.
    static let animationFlag: UInt8 = 0x02
    static let exifFlag: UInt8 = 0x08

    /// One top-level chunk: its FourCC and where its payload lies in the data.
    struct Chunk {
        let fourCC: String
        let payload: Range<Int>
    }

    /// One ANMF frame header, with the range of its frame data (ALPH + VP8, or VP8L).
    struct Frame: Sendable {
        let x: Int
        let y: Int
        let width: Int
        let height: Int
        /// Milliseconds, as stored.
        let durationMs: Int
        /// Alpha-blend over the previous canvas (false: overwrite the rectangle).
        let blends: Bool
        /// Clear the rectangle to transparent before the next frame.
        let disposesToBackground: Bool
        let data: Range<Int>
    }

    private(set) var chunks: [Chunk] = []
    /// VP8X flags, or nil for a simple (VP8 / VP8L only) file.
    private(set) var extendedFlags: UInt8?
    /// VP8X canvas size.
    private(set) var canvasWidth = 0
    private(set) var canvasHeight = 0
    /// ANIM chunk loop count (0 = forever).
    private(set) var loopCount = 0
    private(set) var frames: [Frame] = []
    /// The data ended before the RIFF size said it would, or inside a chunk.
    private(set) var isTruncated = false

    var isAnimated: Bool { (extendedFlags ?? 0) & Self.animationFlag != 0 }

    /// Parses `bytes`; throws `.corrupt` for a malformed structure, `.truncated` when even the RIFF
    /// header is missing, `.tooManyFrames` past `maximumFrames` ANMF chunks (before indexing them).
    init(_ bytes: UnsafeRawBufferPointer, maximumFrames: Int = .max) throws {
        guard bytes.count >= 12 else { throw ImageDecodingError.truncated }
        guard Self.fourCC(bytes, 0) == "RIFF", Self.fourCC(bytes, 8) == "WEBP" else {
            throw ImageDecodingError.corrupt("not a RIFF/WEBP file")
        }
        let riffSize = Int(Self.le32(bytes, 4))
        guard riffSize >= 4 else { throw ImageDecodingError.corrupt("RIFF size \(riffSize) too small") }
        // Trailing bytes after the RIFF payload are ignored, as libwebp does.
        let end = min(bytes.count, 8 + riffSize)
        if 8 + riffSize > bytes.count { isTruncated = true }

        var offset = 12
        var frameChunks = 0
        while offset < end {  // every step advances by at least 8 bytes
            guard offset + 8 <= end else { isTruncated = true; break }
            let size = Int(Self.le32(bytes, offset + 4))
            let payloadStart = offset + 8
            guard size <= end - payloadStart else { isTruncated = true; break }
            let fourCC = Self.fourCC(bytes, offset)
            if fourCC == "ANMF" {
                frameChunks += 1
                if frameChunks > maximumFrames { throw ImageDecodingError.tooManyFrames(limit: maximumFrames) }
            }
            chunks.append(Chunk(fourCC: fourCC, payload: payloadStart..<payloadStart + size))
            offset = payloadStart + size + (size & 1)
        }

        guard let first = chunks.first else { return }
        if first.fourCC == "VP8X" {
            guard first.payload.count >= 10 else { throw ImageDecodingError.corrupt("VP8X chunk too short") }
            let p = first.payload.lowerBound
            extendedFlags = bytes[p]
            canvasWidth = 1 + Int(Self.le24(bytes, p + 4))
            canvasHeight = 1 + Int(Self.le24(bytes, p + 7))
        }
        guard isAnimated else { return }
        for chunk in chunks.dropFirst() {
            switch chunk.fourCC {
            case "ANIM":
                guard chunk.payload.count >= 6 else { throw ImageDecodingError.corrupt("ANIM chunk too short") }
                loopCount = Int(Self.le16(bytes, chunk.payload.lowerBound + 4))
            case "ANMF":
                frames.append(try Self.frame(bytes, chunk.payload))
            default:
                continue
            }
        }
    }

    /// The ICCP chunk's payload (an ICC profile), when present.
    var iccProfile: Range<Int>? { chunks.first { $0.fourCC == "ICCP" }?.payload }

    /// The EXIF chunk's payload, when present.
    var exif: Range<Int>? { chunks.first { $0.fourCC == "EXIF" }?.payload }

    private static func frame(_ bytes: UnsafeRawBufferPointer, _ payload: Range<Int>) throws -> Frame {
        guard payload.count >= 16 else { throw ImageDecodingError.corrupt("ANMF chunk too short") }
        let p = payload.lowerBound
        let flags = bytes[p + 15]
        return Frame(
            x: 2 * Int(le24(bytes, p)), y: 2 * Int(le24(bytes, p + 3)),
            width: 1 + Int(le24(bytes, p + 6)), height: 1 + Int(le24(bytes, p + 9)),
            durationMs: Int(le24(bytes, p + 12)),
            blends: flags & 0x02 == 0, disposesToBackground: flags & 0x01 != 0,
            data: p + 16..<payload.upperBound)
    }

    // MARK: - Frame data

    /// The image chunks inside one frame's data: an optional ALPH and one VP8 or VP8L.
    struct FrameBitstream {
        let alpha: Range<Int>?
        let image: Range<Int>
        let isLossless: Bool
        /// Pixel size from the VP8 frame header (lossy only; lossless decodes report their own).
        let lossyWidth: Int
        let lossyHeight: Int
        /// Whether the frame has an alpha channel (ALPH chunk, or the VP8L header's alpha bit): libwebp's
        /// key-frame rule depends on it.
        let hasAlpha: Bool
    }

    /// Finds ALPH and VP8/VP8L among the sub-chunks of `frame`'s data.
    static func bitstream(of frame: Frame, in bytes: UnsafeRawBufferPointer) throws -> FrameBitstream {
        var offset = frame.data.lowerBound
        var alpha: Range<Int>?
        while offset + 8 <= frame.data.upperBound {  // advances by at least 8 bytes
            let tag = fourCC(bytes, offset)
            let size = Int(le32(bytes, offset + 4))
            let start = offset + 8
            guard size <= frame.data.upperBound - start else { throw ImageDecodingError.corrupt("frame chunk \(tag) overruns its ANMF") }
            let payload = start..<start + size
            switch tag {
            case "ALPH":
                if alpha == nil { alpha = payload }
            case "VP8 ":
                // Key frame header: 3-byte tag, start code 9d 01 2a, then 14-bit width and height.
                guard size >= 10 else { throw ImageDecodingError.corrupt("VP8 frame header too short") }
                let width = Int(le16(bytes, start + 6) & 0x3FFF), height = Int(le16(bytes, start + 8) & 0x3FFF)
                return FrameBitstream(alpha: alpha, image: payload, isLossless: false,
                                      lossyWidth: width, lossyHeight: height, hasAlpha: alpha != nil)
            case "VP8L":
                // libwebp's demuxer rejects ALPH before VP8L (lossless carries its own alpha).
                guard alpha == nil else { throw ImageDecodingError.corrupt("ALPH chunk before VP8L") }
                let alphaBit = size >= 5 ? (bytes[start + 4] >> 4) & 1 : 0
                return FrameBitstream(alpha: nil, image: payload, isLossless: true,
                                      lossyWidth: 0, lossyHeight: 0, hasAlpha: alphaBit != 0)
            default:
                break
            }
            offset = start + size + (size & 1)
        }
        throw ImageDecodingError.corrupt("animation frame without VP8/VP8L data")
    }

    /// A minimal standalone WebP file holding one frame's bitstream, for libwebp's simple API: RIFF+VP8L,
    /// RIFF+VP8, or RIFF+VP8X(alpha)+ALPH+VP8.
    static func standaloneFile(for stream: FrameBitstream, in bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8)
        func appendChunk(_ tag: String, _ range: Range<Int>) {
            out += Array(tag.utf8)
            out += le32Bytes(range.count)
            out += UnsafeRawBufferPointer(rebasing: bytes[range])
            if range.count & 1 == 1 { out.append(0) }
        }
        if let alpha = stream.alpha {
            out += Array("VP8X".utf8) + le32Bytes(10) + [0x10, 0, 0, 0]
            out += le24Bytes(stream.lossyWidth - 1) + le24Bytes(stream.lossyHeight - 1)
            appendChunk("ALPH", alpha)
        }
        appendChunk(stream.isLossless ? "VP8L" : "VP8 ", stream.image)
        let riff = le32Bytes(out.count - 8)
        out.replaceSubrange(4..<8, with: riff)
        return out
    }

    // MARK: - Little-endian helpers (callers guarantee the bounds)

    static func fourCC(_ b: UnsafeRawBufferPointer, _ i: Int) -> String {
        String(decoding: b[i..<i + 4], as: UTF8.self)
    }
    static func le16(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { UInt32(b[i]) | UInt32(b[i + 1]) << 8 }
    static func le24(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { le16(b, i) | UInt32(b[i + 2]) << 16 }
    static func le32(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { le24(b, i) | UInt32(b[i + 3]) << 24 }
    private static func le24Bytes(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF)] }
    private static func le32Bytes(_ v: Int) -> [UInt8] { le24Bytes(v) + [UInt8((v >> 24) & 0xFF)] }
}

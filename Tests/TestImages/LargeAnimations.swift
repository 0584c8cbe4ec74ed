import Decoding
import Foundation

/// The big animations of the issue that moved frames on demand (1000×1000 × 120 frames and 2000×2000 × 40),
/// made here: every frame covers the whole canvas (an eager decoder would hold all of them), frames
/// alternate between a few uniform colours so the files stay small and quick to make.
public enum LargeAnimations {
    /// The colours the GIF's frames cycle through (RGBA8): red, green, blue.
    public static let gifColours: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]]

    /// Frame `index` of `gif(side:frames:)`, composited: one uniform colour.
    public static func gifFrame(_ index: Int, side: Int) -> [UInt8] {
        Array([[UInt8]](repeating: gifColours[index % 3], count: side * side).joined())
    }

    /// A GIF of `frames` full-canvas frames of `side`×`side`, cycling through three palette colours (`gifColours`).
    public static func gif(side: Int, frames: Int) -> Data {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        var out = Array("GIF89a".utf8) + u16(side) + u16(side) + [0x81, 0, 0]
        out += [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
        out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]
        let encoded = (1...3).map { uniformLZW(index: UInt8($0), count: side * side) }
        for frame in 0..<frames {
            out += [0x21, 0xF9, 4, 0x04, 4, 0, 0, 0]  // disposal 1 (keep), 40 ms
            out += [0x2C, 0, 0, 0, 0] + u16(side) + u16(side) + [0, 2]
            out += subBlocks(encoded[frame % 3]) + [0]
        }
        out.append(0x3B)
        return Data(out)
    }

    /// An APNG of `frames` full-canvas frames (the default image is the first), reusing one encoded frame.
    public static func apng(side: Int, frames: Int) throws -> Data {
        let encoded = try encodedFrame(side: side, format: .png)
        func u32(_ v: Int) -> [UInt8] { [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ body: [UInt8]) {
            let typed = Array(type.utf8) + body
            out += u32(body.count) + typed + u32(Int(crc32(typed)))
        }
        let png = pngChunks([UInt8](encoded))
        chunk("IHDR", png.first { $0.type == "IHDR" }?.body ?? [])
        chunk("acTL", u32(frames) + u32(0))
        let idat = png.filter { $0.type == "IDAT" }.flatMap(\.body)
        var sequence = 0
        for frame in 0..<frames {
            chunk("fcTL", u32(sequence) + u32(side) + u32(side) + u32(0) + u32(0) + [0, 4, 0, 100, 0, 0])
            sequence += 1
            if frame == 0 {
                chunk("IDAT", idat)
            } else {
                chunk("fdAT", u32(sequence) + idat)
                sequence += 1
            }
        }
        chunk("IEND", [])
        return Data(out)
    }

    /// An animated WebP of `frames` full-canvas lossless frames, reusing one encoded frame.
    public static func webp(side: Int, frames: Int) throws -> Data {
        let encoded = try encodedFrame(side: side, format: .webp)
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        func chunk(_ tag: String, _ payload: [UInt8]) -> [UInt8] { Array(tag.utf8) + le(payload.count, 4) + payload + (payload.count & 1 == 1 ? [0] : []) }
        let file = [UInt8](encoded)
        let size = Int(file[16]) | Int(file[17]) << 8 | Int(file[18]) << 16 | Int(file[19]) << 24
        let vp8l = Array(file[20..<(20 + size)])  // RIFF + WEBP + "VP8L" + size, then the bitstream
        var body = Array("WEBP".utf8) + chunk("VP8X", [0x02, 0, 0, 0] + le(side - 1, 3) + le(side - 1, 3))
        body += chunk("ANIM", [0, 0, 0, 0, 0, 0])
        for _ in 0..<frames {
            body += chunk("ANMF", [0, 0, 0, 0, 0, 0] + le(side - 1, 3) + le(side - 1, 3) + le(40, 3) + [0x02] + chunk("VP8L", vp8l))
        }
        return Data(Array("RIFF".utf8) + le(body.count, 4) + body)
    }

    /// One `side`×`side` frame (a horizontal gradient) encoded as a still PNG or lossless WebP.
    private static func encodedFrame(side: Int, format: ImageFormat) throws -> Data {
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        for p in stride(from: 0, to: pixels.count, by: 4) { pixels[p] = UInt8((p / 4) % side * 255 / max(1, side - 1)) }
        let still = DecodedImage(width: side, height: side, pixels: pixels, format: format)
        return format == .webp
            ? try ImageCodersManager.shared.encode(still, options: ImageEncodingOptions(format: .webp, lossless: true))
            : try ImageCodersManager.shared.encode(still, format: .png)
    }

    /// LZW (minimum code size 2) of `count` copies of `index`, as any GIF encoder writes it: the table of
    /// runs grows by one entry per code, so the codes stay few.
    public static func uniformLZW(index: UInt8, count: Int) -> [UInt8] {
        let clear = 4
        var table = [Int16](repeating: -1, count: 4096 * 4)  // (prefix code, symbol) → code
        var codeSize = 3, next = clear + 2
        var out: [UInt8] = [], bits = 0, bitCount = 0
        func emit(_ code: Int) {
            bits |= code << bitCount
            bitCount += codeSize
            while bitCount >= 8 { out.append(UInt8(bits & 0xFF)); bits >>= 8; bitCount -= 8 }
        }
        emit(clear)
        var current = Int(index)
        for _ in 1..<count {
            let key = current * 4 + Int(index)
            if table[key] >= 0 { current = Int(table[key]); continue }
            emit(current)
            if next < 4096 {
                table[key] = Int16(next)
                next += 1
                if next > (1 << codeSize) && codeSize < 12 { codeSize += 1 }
            }
            current = Int(index)
        }
        emit(current)
        emit(clear + 1)
        if bitCount > 0 { out.append(UInt8(bits & 0xFF)) }
        return out
    }

    /// GIF data sub-blocks (at most 255 bytes each), without the terminator.
    public static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        stride(from: 0, to: data.count, by: 255).flatMap { start -> [UInt8] in
            let end = min(data.count, start + 255)
            return [UInt8(end - start)] + data[start..<end]
        }
    }

    /// The chunks of a PNG file, in order.
    public static func pngChunks(_ file: [UInt8]) -> [(type: String, body: [UInt8])] {
        var chunks: [(String, [UInt8])] = []
        var offset = 8
        while offset + 12 <= file.count {
            let length = Int(file[offset]) << 24 | Int(file[offset + 1]) << 16 | Int(file[offset + 2]) << 8 | Int(file[offset + 3])
            guard offset + 12 + length <= file.count else { break }
            chunks.append((String(decoding: file[offset + 4..<offset + 8], as: UTF8.self), Array(file[offset + 8..<offset + 8 + length])))
            offset += 12 + length
        }
        return chunks
    }
}

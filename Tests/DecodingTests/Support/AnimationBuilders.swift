import Decoding
import Foundation
import Testing

/// Animated test images made in the test itself (no outside files): GIF with every disposal, transparency,
/// local palettes, interlacing and frames reaching outside the screen; APNG with every dispose and blend
/// operation; animated WebP (lossless frames, with and without alpha, blending and disposal).
enum AnimationBuilders {
    /// One GIF frame: palette indices of its rectangle in row order.
    struct GIFFrame {
        var x = 0, y = 0, width: Int, height: Int
        var indices: [UInt8]
        var disposal = 0
        var transparentIndex: Int?
        var delayCentiseconds = 5
        /// RGB triplets, 4 entries (minimum code size 2), or nil for the global palette.
        var localPalette: [UInt8]?
        var interlaced = false
    }

    /// A GIF89a with a 4-colour global palette, a NETSCAPE2.0 loop count and `frames`.
    static func gif(width: Int, height: Int, loopCount: Int = 0, frames: [GIFFrame]) -> Data {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        var out = Array("GIF89a".utf8) + u16(width) + u16(height) + [0x81, 0, 0]
        out += [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]
        out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + u16(loopCount) + [0]
        for frame in frames {
            let flags = UInt8(frame.disposal << 2) | (frame.transparentIndex == nil ? 0 : 1)
            out += [0x21, 0xF9, 4, flags] + u16(frame.delayCentiseconds) + [UInt8(frame.transparentIndex ?? 0), 0]
            var descriptorFlags: UInt8 = frame.interlaced ? 0x40 : 0
            if frame.localPalette != nil { descriptorFlags |= 0x81 }
            out += [0x2C] + u16(frame.x) + u16(frame.y) + u16(frame.width) + u16(frame.height) + [descriptorFlags]
            if let palette = frame.localPalette { out += palette }
            let rows = frame.interlaced ? interlaceOrder(frame.indices, width: frame.width, height: frame.height) : frame.indices
            out += [2] + GIFBuilder.subBlocks(GIFBuilder.lzwEncode(rows, minCodeSize: 2)) + [0]
        }
        out.append(0x3B)
        return Data(out)
    }

    /// Rows in GIF interlace order: every 8th from 0, every 8th from 4, every 4th from 2, every 2nd from 1.
    static func interlaceOrder(_ indices: [UInt8], width: Int, height: Int) -> [UInt8] {
        var out: [UInt8] = []
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            for row in stride(from: start, to: height, by: step) { out += indices[row * width..<(row + 1) * width] }
        }
        return out
    }

    /// A random GIF animation of `frameCount` frames exercising every compositing rule.
    static func randomGIF(seed: UInt64, width: Int = 24, height: Int = 18, frameCount: Int = 12) -> Data {
        var random = SeededRandom(seed: seed)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(max(1, n))) }
        var frames: [GIFFrame] = []
        for index in 0..<frameCount {
            // Mostly inside the screen; now and then covering it all, or reaching past its right/bottom edge.
            let full = index == 0 || pick(5) == 0
            let w = full ? width : 1 + pick(width), h = full ? height : 1 + pick(height)
            let x = full ? 0 : pick(width + 4 - min(w, width)), y = full ? 0 : pick(height + 4 - min(h, height))
            var indices = [UInt8](repeating: 0, count: w * h)
            for i in indices.indices { indices[i] = UInt8(pick(4)) }
            var frame = GIFFrame(x: x, y: y, width: w, height: h, indices: indices)
            frame.disposal = pick(4)
            frame.transparentIndex = pick(2) == 0 ? pick(4) : nil
            frame.delayCentiseconds = pick(12)
            if pick(3) == 0 { frame.localPalette = (0..<12).map { _ in UInt8(pick(256)) } }
            frame.interlaced = pick(4) == 0
            frames.append(frame)
        }
        return gif(width: width, height: height, loopCount: pick(3), frames: frames)
    }

    /// One APNG frame: RGBA pixels of its rectangle and its fcTL operations.
    struct APNGFrame {
        var x = 0, y = 0, width: Int, height: Int
        var rgba: [UInt8]
        var dispose: UInt8 = 0
        var blend: UInt8 = 0
        var delay: (numerator: Int, denominator: Int) = (1, 10)
    }

    /// An APNG whose default image is its first frame (which must cover the canvas).
    static func apng(width: Int, height: Int, loopCount: Int = 0, frames: [APNGFrame]) throws -> Data {
        func u32(_ v: Int) -> [UInt8] { [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        func u16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        var chunks: [(String, [UInt8])] = []
        var sequence = 0
        for (index, frame) in frames.enumerated() {
            let still = DecodedImage(width: frame.width, height: frame.height, pixels: frame.rgba, format: .png)
            let encoded = PNGCoderTests.chunks(of: try ImageCodersManager.shared.encode(still, format: .png))
            if index == 0 {
                var header = try #require(encoded.first { $0.0 == "IHDR" }).1
                header.replaceSubrange(0..<8, with: u32(width) + u32(height))
                chunks.append(("IHDR", header))
                chunks.append(("acTL", u32(frames.count) + u32(loopCount)))
            }
            chunks.append(("fcTL", u32(sequence) + u32(frame.width) + u32(frame.height) + u32(frame.x) + u32(frame.y)
                                + u16(frame.delay.numerator) + u16(frame.delay.denominator) + [frame.dispose, frame.blend]))
            sequence += 1
            for (name, data) in encoded where name == "IDAT" {
                if index == 0 {
                    chunks.append(("IDAT", data))
                } else {
                    chunks.append(("fdAT", u32(sequence) + data))
                    sequence += 1
                }
            }
        }
        chunks.append(("IEND", []))
        return PNGCoderTests.png(chunks)
    }

    /// A random APNG: frames with translucent pixels (so every frame is RGBA and "over" blends), random
    /// rectangles, dispose and blend operations.
    static func randomAPNG(seed: UInt64, width: Int = 20, height: Int = 16, frameCount: Int = 10) throws -> Data {
        var random = SeededRandom(seed: seed)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(max(1, n))) }
        var frames: [APNGFrame] = []
        for index in 0..<frameCount {
            let full = index == 0 || pick(4) == 0
            let w = full ? width : 1 + pick(width), h = full ? height : 1 + pick(height)
            let x = full ? 0 : pick(width - w + 1), y = full ? 0 : pick(height - h + 1)
            var rgba = [UInt8](repeating: 0, count: w * h * 4)
            for i in rgba.indices { rgba[i] = UInt8(pick(256)) }
            for p in stride(from: 3, to: rgba.count, by: 4) { rgba[p] = [0, 128, 255, 255][pick(4)] }
            rgba[3] = 128  // at least one translucent pixel: the encoder then writes RGBA for every frame
            frames.append(APNGFrame(x: x, y: y, width: w, height: h, rgba: rgba, dispose: UInt8(pick(3)), blend: UInt8(pick(2)),
                                    delay: (pick(20), [0, 10, 100][pick(3)])))
        }
        return try apng(width: width, height: height, loopCount: pick(3), frames: frames)
    }
}

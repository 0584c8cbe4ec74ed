import Decoding
import Foundation
import Testing

/// Animated WebP files made from lossless frames encoded by libwebp (`ImageCodersManager.encode`): the VP8L
/// chunk of each encoded still becomes one ANMF frame.
enum AnimatedWebPBuilder {
    struct Frame {
        var x = 0, y = 0, width: Int, height: Int
        var rgba: [UInt8]
        var durationMs = 80
        var blends = true
        var disposesToBackground = false
    }

    static func webp(width: Int, height: Int, loopCount: Int = 0, frames: [Frame]) throws -> Data {
        func le(_ v: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        func chunk(_ tag: String, _ payload: [UInt8]) -> [UInt8] {
            Array(tag.utf8) + le(payload.count, 4) + payload + (payload.count & 1 == 1 ? [0] : [])
        }
        var body = Array("WEBP".utf8)
        body += chunk("VP8X", [0x12, 0, 0, 0] + le(width - 1, 3) + le(height - 1, 3))
        body += chunk("ANIM", [0, 0, 0, 0] + le(loopCount, 2))
        for frame in frames {
            let still = DecodedImage(width: frame.width, height: frame.height, pixels: frame.rgba, format: .webp)
            let file = [UInt8](try ImageCodersManager.shared.encode(still, options: ImageEncodingOptions(format: .webp, lossless: true)))
            let image = try #require(chunks(of: file).first { $0.tag == "VP8L" })
            let flags: UInt8 = (frame.blends ? 0 : 0x02) | (frame.disposesToBackground ? 0x01 : 0)
            let header = le(frame.x / 2, 3) + le(frame.y / 2, 3) + le(frame.width - 1, 3) + le(frame.height - 1, 3)
                + le(frame.durationMs, 3) + [flags]
            body += chunk("ANMF", header + chunk("VP8L", image.payload))
        }
        return Data(Array("RIFF".utf8) + le(body.count, 4) + body)
    }

    /// The top-level chunks of a RIFF/WEBP file.
    static func chunks(of file: [UInt8]) -> [(tag: String, payload: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var offset = 12
        while offset + 8 <= file.count {
            let size = Int(file[offset + 4]) | Int(file[offset + 5]) << 8 | Int(file[offset + 6]) << 16 | Int(file[offset + 7]) << 24
            guard offset + 8 + size <= file.count else { break }
            out.append((String(decoding: file[offset..<offset + 4], as: UTF8.self), Array(file[offset + 8..<offset + 8 + size])))
            offset += 8 + size + (size & 1)
        }
        return out
    }

    /// A random animation: even offsets (WebP stores them halved), opaque and translucent frames, blending
    /// and disposal at random, so libwebp's key-frame rule meets every case.
    static func random(seed: UInt64, width: Int = 24, height: Int = 20, frameCount: Int = 10) throws -> Data {
        var random = SeededRandom(seed: seed)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(max(1, n))) }
        var frames: [Frame] = []
        for index in 0..<frameCount {
            let full = index == 0 || pick(4) == 0
            let w = full ? width : 1 + pick(width), h = full ? height : 1 + pick(height)
            let x = full ? 0 : (pick(width - w + 1) / 2) * 2, y = full ? 0 : (pick(height - h + 1) / 2) * 2
            let opaque = pick(3) == 0
            var rgba = [UInt8](repeating: 0, count: w * h * 4)
            for i in rgba.indices { rgba[i] = UInt8(pick(256)) }
            for p in stride(from: 3, to: rgba.count, by: 4) { rgba[p] = opaque ? 255 : [0, 100, 255][pick(3)] }
            frames.append(Frame(x: x, y: y, width: w, height: h, rgba: rgba, durationMs: pick(200),
                                blends: pick(2) == 0, disposesToBackground: pick(3) == 0))
        }
        return try webp(width: width, height: height, loopCount: pick(3), frames: frames)
    }
}

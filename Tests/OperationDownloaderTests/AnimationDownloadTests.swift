import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// Big animations through the operation, on the scripted transport (chunk by chunk, progressive or not): a
/// valid 1000×1000 × 120-frame GIF is delivered with every frame, never as "truncated"; `.preloadAllFrames`
/// is part of the variant and fills `frames`; `.decodeFirstFrameOnly` gives a still image.
@Suite struct AnimationDownloadTests {
    /// 120 full-canvas 1000×1000 frames: 120 MP in all, past the 100 MP the frames used to be capped at.
    static let bigGIF = BigGIF.make(side: 1000, frames: 120)

    @Test(arguments: [ImageDownloaderOptions(), .progressiveLoad])
    func bigAnimationIsDeliveredWithEveryFrame(options: ImageDownloaderOptions) async throws {
        let harness = ScriptedHarness()
        let (recorder, _) = harness.download(ScriptedHarness.url("big.gif"), options: options)
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(headers: ["Content-Type": "image/gif", "Content-Length": "\(Self.bigGIF.count)"])
        transfer.send(Self.bigGIF, inChunks: 16)
        transfer.complete()
        await recorder.completion()
        await harness.drained()
        let image = try #require(recorder.final?.image, "\(String(describing: recorder.final?.error))")
        #expect(!image.isIncomplete && image.frameCount == 120 && image.frames.isEmpty)
        let animation = try #require(image.animation)
        #expect(try animation.frame(at: 119) == BigGIF.frame(119, side: 1000))
    }

    @Test func preloadAllFramesFillsFramesAndDecodeFirstFrameOnlyGivesAStill() async throws {
        let harness = ScriptedHarness()
        let small = BigGIF.make(side: 40, frames: 6)
        let (preloading, _) = harness.download(ScriptedHarness.url("small.gif"), options: .preloadAllFrames)
        let (still, _) = harness.download(ScriptedHarness.url("small.gif"), options: .decodeFirstFrameOnly)
        let (plain, _) = harness.download(ScriptedHarness.url("small.gif"))
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(headers: ["Content-Type": "image/gif"])
        transfer.send(small, inChunks: 3)
        transfer.complete()
        for recorder in [preloading, still, plain] { await recorder.completion() }
        await harness.drained()
        #expect(harness.transport.transfers.count == 1, "one transfer for the three variants")
        let eager = try #require(preloading.final?.image)
        #expect(eager.frames.count == 6 && eager.frames[5].pixels == BigGIF.frame(5, side: 40))
        #expect(still.final?.image?.frameCount == 1 && still.final?.image?.animation == nil)
        let onDemand = try #require(plain.final?.image)
        #expect(onDemand.frames.isEmpty && onDemand.frameCount == 6)
    }
}

/// GIFs of uniform full-canvas frames cycling through red, green and blue (quick to make and to check).
enum BigGIF {
    static let colours: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]]

    static func frame(_ index: Int, side: Int) -> [UInt8] {
        Array([[UInt8]](repeating: colours[index % 3], count: side * side).joined())
    }

    static func make(side: Int, frames: Int) -> Data {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        var out = Array("GIF89a".utf8) + u16(side) + u16(side) + [0x81, 0, 0]
        out += [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
        let encoded = (1...3).map { lzw(index: UInt8($0), count: side * side) }
        for frame in 0..<frames {
            out += [0x21, 0xF9, 4, 0x04, 4, 0, 0, 0]
            out += [0x2C, 0, 0, 0, 0] + u16(side) + u16(side) + [0, 2]
            let data = encoded[frame % 3]
            for start in stride(from: 0, to: data.count, by: 255) {
                let end = min(data.count, start + 255)
                out += [UInt8(end - start)] + data[start..<end]
            }
            out.append(0)
        }
        out.append(0x3B)
        return Data(out)
    }

    /// LZW (minimum code size 2) of `count` copies of `index`.
    static func lzw(index: UInt8, count: Int) -> [UInt8] {
        var table = [Int16](repeating: -1, count: 4096 * 4)
        var codeSize = 3, next = 6
        var out: [UInt8] = [], bits = 0, bitCount = 0
        func emit(_ code: Int) {
            bits |= code << bitCount
            bitCount += codeSize
            while bitCount >= 8 { out.append(UInt8(bits & 0xFF)); bits >>= 8; bitCount -= 8 }
        }
        emit(4)
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
        emit(5)
        if bitCount > 0 { out.append(UInt8(bits & 0xFF)) }
        return out
    }
}

import Foundation
import Testing
import TestImages
import TestRequirements
@testable import Decoding

/// AVIF image sequences as `AnimatedImage`s: frames decoded on demand from the nearest AV1 key frame, in any
/// order and from many threads, equal to a sequential decode; durations from the track, the loop count from the
/// edit list; working memory reserved against the decode budget.
@Suite(.serialized, .offThePool) struct AVIFSequenceTests {
    /// 9 frames, key frames every 3 (0, 3, 6), durations 40, 40, 80, ... ms.
    static func keyed() throws -> Data {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let frames = (0..<9).map { AVIFTools.pattern(width: 40, height: 30, frame: $0, alpha: $0 % 2 == 0) }
        let durations = (0..<9).map { ["--duration", String($0 % 3 == 2 ? 8 : 4)] }
        let file = try AVIFTools.encode(frames, ["-s", "10", "-k", "3", "--timescale", "100"], perFrame: durations,
                                        in: folder, name: "keyed")
        return try Data(contentsOf: file)
    }

    @Test(.requires(.libavif, .avifTools))
    func framesOnDemandEqualASequentialDecodeInAnyOrder() throws {
        let data = try Self.keyed()
        let eager = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(preloadAllFrames: true))
        #expect(eager.frames.count == 9)
        let sequential = eager.frames.map(\.pixels)
        #expect(sequential[0] == eager.pixels)
        let orders = [Array(0..<9), Array((0..<9).reversed()), [4, 8, 0, 5, 5, 1, 7, 2, 6, 3]]
        for order in orders {
            let image = try ImageCodersManager.shared.decode(data)
            let animation = try #require(image.animation)
            #expect(image.frames.isEmpty)
            for index in order {
                #expect(try animation.frame(at: index) == sequential[index], "frame \(index) in order \(order)")
            }
        }
        let animation = try #require(try ImageCodersManager.shared.decode(data).animation)
        #expect(throws: ImageDecodingError.frameIndexOutOfRange(index: 9, frameCount: 9)) { try animation.frame(at: 9) }
        #expect(throws: ImageDecodingError.frameIndexOutOfRange(index: -1, frameCount: 9)) { try animation.frame(at: -1) }
    }

    @Test(.requires(.libavif, .avifTools))
    func keyFramesDurationsAndLoopCount() throws {
        let image = try ImageCodersManager.shared.decode(try Self.keyed())
        let animation = try #require(image.animation)
        let source = try #require(animation.source as? AVIFSequenceFrames)
        #expect(source.keyFrames == (0..<9).map { $0 % 3 == 0 })
        #expect((0..<9).map(source.keyFrame(atOrBefore:)) == [0, 0, 0, 3, 3, 3, 6, 6, 6])
        #expect((0..<9).map(animation.duration(at:)) == (0..<9).map { $0 % 3 == 2 ? 0.08 : 0.04 })
        #expect(abs(animation.totalDuration - 0.48) < 1e-9)
        // avifenc 0.11 writes no edit list: unknown, played forever.
        #expect(animation.loopCount == 0 && image.loopCount == 0)
        // libavif's files: no repeat flag (played once) and repeat over an indefinite track (forever).
        let once = try ImageCodersManager.shared.decode(try AVIFFixtures.data("libavif/colors-animated-8bpc.avif"))
        #expect(once.loopCount == 1 && once.frameCount == 5)
        let forever = try ImageCodersManager.shared.decode(try AVIFFixtures.data("libavif/colors-animated-8bpc-alpha-exif-xmp.avif"))
        #expect(forever.loopCount == 0 && forever.frameCount == 5)
        // Key frames of libavif's 12-bit file are 0, 2 and 3.
        let keyframes = try ImageCodersManager.shared.decode(try AVIFFixtures.data("libavif/colors-animated-12bpc-keyframes-0-2-3.avif"))
        let keys = try #require(keyframes.animation?.source as? AVIFSequenceFrames).keyFrames
        #expect(Array(keys.prefix(4)) == [true, false, true, true])
    }

    @Test func durationsFollowChromiumsRule() {
        #expect(AVIFSequenceFrames.duration(seconds: 1.0 / 60) == 1.0 / 60)  // 60 fps kept
        #expect(AVIFSequenceFrames.duration(seconds: 0.011) == 0.011)
        #expect(AVIFSequenceFrames.duration(seconds: 0.010) == 0.1)
        #expect(AVIFSequenceFrames.duration(seconds: 0) == 0.1)
        #expect(AVIFSequenceFrames.duration(seconds: nil) == 0.1)
    }

    @Test(.requires(.libavif, .avifTools))
    func framesFromManyThreadsAtOnce() async throws {
        let data = try Self.keyed()
        let expected = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(preloadAllFrames: true)).frames.map(\.pixels)
        let animation = try #require(try ImageCodersManager.shared.decode(data).animation)
        let results = await withTaskGroup(of: (Int, [UInt8]?).self) { group in
            for round in 0..<36 {
                group.addTask { (round % 9, try? animation.frame(at: (round * 5) % 9)) }
            }
            var all: [(Int, [UInt8]?)] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 36)
        for round in 0..<36 {
            let index = (round * 5) % 9
            #expect(try animation.frame(at: index) == expected[index])
        }
        #expect(results.allSatisfy { $0.1 != nil })
    }

    /// The decoder a compositor keeps is reserved while a frame decodes and counted in `memoryCost` while kept;
    /// a budget smaller than one frame's working set refuses the frame rather than overrunning it.
    @Test(.requires(.libavif, .avifTools))
    func workingMemoryIsReservedAgainstTheBudget() throws {
        let frames = (0..<3).map { AVIFTools.pattern(width: 400, height: 300, frame: $0) }
        let data = try AVIFFiles.data(frames, ["-s", "10", "-y", "420"])
        let image = try ImageCodersManager.shared.decode(data)
        let animation = try #require(image.animation)
        let source = try #require(animation.source as? AVIFSequenceFrames)
        #expect(source.decoderBytes >= 10 * 400 * 300 * 3 / 2)  // ten 4:2:0 pictures at least
        #expect(animation.workingBytes == source.decoderBytes + 400 * 300 * 4)
        let before = image.memoryCost
        #expect(before >= 400 * 300 * 4 + data.count)
        _ = try animation.frame(at: 1)
        #expect(image.memoryCost >= before + source.decoderBytes, "the kept decoder is counted")
        let budget = ImageDecodingBudget(limitBytes: animation.workingBytes - 1)
        let starved = AnimatedImage(source: source, budget: budget)
        #expect(throws: ImageDecodingError.exceedsDecodingBudget(width: 400, height: 300, bytes: animation.workingBytes,
                                                                 budgetBytes: animation.workingBytes - 1)) {
            try starved.frame(at: 2)
        }
        #expect(budget.reservedBytes == 0)
        // With room for exactly one frame's work, frames decode one after another.
        let enough = AnimatedImage(source: source, budget: ImageDecodingBudget(limitBytes: animation.workingBytes))
        #expect(try enough.frame(at: 2) == animation.frame(at: 2))
    }

    @Test(.requires(.libavif, .avifTools))
    func firstFrameOnlyAndThumbnails() throws {
        let data = try Self.keyed()
        let still = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(decodeFirstFrameOnly: true))
        #expect(still.frameCount == 1 && still.animation == nil)
        let full = try ImageCodersManager.shared.decode(data)
        let thumb = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 20, height: 20)))
        let animation = try #require(thumb.animation)
        #expect(thumb.width == 20 && thumb.height == 15 && animation.width == 20)
        // Each frame is scaled as the poster was.
        let frame4 = try #require(full.animation).frame(at: 4)
        let scaled = ImageScaler.resize(DecodedImage(width: 40, height: 30, pixels: frame4, format: .avif), width: 20, height: 15)
        #expect(try animation.frame(at: 4) == scaled.pixels)
    }
}

import Decoding
import Foundation
import TestRequirements
import Testing

/// Hostile and damaged animations: frame-count bombs, LZW bombs, a huge canvas with tiny frames, truncated
/// files (still `isIncomplete`, with the frames that exist). Limits refuse with errors that name them.
@Suite(.serialized, .offThePool) struct AnimationHostileInputTests {
    static func tinyFrames(_ count: Int, step: Int = 1) -> [AnimationBuilders.GIFFrame] {
        (0..<count).map { i in AnimationBuilders.GIFFrame(x: (i * step) % 60000, y: 0, width: 1, height: 1, indices: [UInt8(i % 4)]) }
    }

    @Test func gifFrameCountBombIsRefusedByTheFrameLimit() throws {
        let bomb = AnimationBuilders.gif(width: 4, height: 4, frames: Self.tinyFrames(10_001))
        #expect(throws: ImageDecodingError.tooManyFrames(limit: 10_000)) { try ImageCodersManager.shared.decode(bomb) }
        let fine = AnimationBuilders.gif(width: 4, height: 4, frames: Self.tinyFrames(10_000))
        #expect(try ImageCodersManager.shared.decode(fine).frameCount == 10_000)
        #expect(throws: ImageDecodingError.tooManyFrames(limit: 9)) {
            try ImageCodersManager.shared.decode(AnimationBuilders.randomGIF(seed: 1), options: ImageDecodingOptions(maximumFrameCount: 9))
        }
    }

    @Test func apngAndWebPFrameCountsAreLimitedToo() throws {
        let apng = try AnimationBuilders.randomAPNG(seed: 2, frameCount: 10)
        #expect(throws: ImageDecodingError.tooManyFrames(limit: 9)) {
            try ImageCodersManager.shared.decode(apng, options: ImageDecodingOptions(maximumFrameCount: 9))
        }
        #expect(try ImageCodersManager.shared.decode(apng, options: ImageDecodingOptions(maximumFrameCount: 10)).frameCount == 10)
        try Requirement.check(.libwebp)
        let webp = try AnimatedWebPBuilder.random(seed: 2, frameCount: 10)
        #expect(throws: ImageDecodingError.tooManyFrames(limit: 9)) {
            try ImageCodersManager.shared.decode(webp, options: ImageDecodingOptions(maximumFrameCount: 9))
        }
        #expect(try ImageCodersManager.shared.decode(webp, options: ImageDecodingOptions(maximumFrameCount: 10)).frameCount == 10)
    }

    /// LZW data that expands far past its frame: only the frame's pixels are kept, in every frame composited.
    @Test func lzwBombFillsItsFrameAndNoMore() throws {
        let flood = GIFBuilder.lzwEncode([UInt8](repeating: 1, count: 64 * 64 * 200), minCodeSize: 2)
        var data = [UInt8](AnimationBuilders.gif(width: 64, height: 64, frames: [
            .init(width: 64, height: 64, indices: [UInt8](repeating: 2, count: 64 * 64)),
            .init(width: 64, height: 64, indices: [UInt8](repeating: 2, count: 64 * 64)),
        ]))
        // Replace the second frame's data with the flood.
        let second = try #require(GIFBuilder.localPaletteOffsets(Data(data)).last)
        data.replaceSubrange((second + 1)..<(data.count - 1), with: GIFBuilder.subBlocks(flood) + [0])
        let image = try ImageCodersManager.shared.decode(Data(data))
        let frame = try #require(image.animation).frame(at: 1)
        #expect(image.frameCount == 2 && frame.count == 64 * 64 * 4)
        #expect(stride(from: 0, to: frame.count, by: 4).allSatisfy { Array(frame[$0..<$0 + 4]) == [0, 255, 0, 255] })
    }

    /// Old rule (removed): the frames of one animation could total at most `maximumPixelCount`, so a big canvas
    /// lost its later frames. Now the limit guards one canvas; frames are composited one at a time.
    @Test func hugeCanvasWithTinyFramesKeepsEveryFrame() throws {
        let side = 3000
        let frames = (0..<300).map { i in AnimationBuilders.GIFFrame(x: i * 10, y: i * 10, width: 1, height: 1, indices: [1]) }
        let data = AnimationBuilders.gif(width: side, height: side, frames: frames)
        let budget = ImageDecodingBudget(limitBytes: 160 << 20)
        let options = ImageDecodingOptions(maximumPixelCount: side * side, preloadAllFrames: true, decodingBudget: budget)
        let image = try ImageCodersManager.shared.decode(data, options: options)
        #expect(image.frameCount == 300 && !image.isIncomplete)
        #expect(image.frames.isEmpty, "300 canvases do not fit in the budget: frames stay on demand")
        let last = try #require(image.animation).frame(at: 299)
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(last[(y * side + x) * 4..<(y * side + x) * 4 + 4]) }
        #expect(pixel(0, 0) == [0, 255, 0, 255] && pixel(2990, 2990) == [0, 255, 0, 255] && pixel(5, 5) == [0, 0, 0, 0])
        #expect(image.memoryCost < side * side * 4 * 6, "the poster, one kept canvas and a cached frame or two")
        #expect(budget.reservedBytes == 0)
    }

    /// A first frame larger than the logical screen (16×16 on 10×10, the shape of image-rs'
    /// issue_1455_oversized.gif) is clipped to the screen, as image-rs renders it (Docs/Decoding.md says why).
    @Test func gifFramesLargerThanTheScreenAreClippedToIt() throws {
        let big = (0..<256).map { UInt8(($0 % 16 + $0 / 16) % 4) }
        let data = AnimationBuilders.gif(width: 10, height: 10, frames: [
            .init(width: 16, height: 16, indices: big),
            .init(x: 6, y: 6, width: 8, height: 8, indices: [UInt8](repeating: 3, count: 64)),
        ])
        let image = try ImageCodersManager.shared.decode(data)
        #expect(image.width == 10 && image.height == 10 && image.frameCount == 2)
        let palette: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, 255]]
        let clipped = (0..<100).flatMap { palette[Int(big[($0 / 10) * 16 + $0 % 10])] }
        #expect(image.pixels == clipped)
        var second = clipped
        for y in 6..<10 { for x in 6..<10 { second.replaceSubrange((y * 10 + x) * 4..<(y * 10 + x) * 4 + 4, with: palette[3]) } }
        #expect(try image.animation?.frame(at: 1) == second)
    }

    @Test func truncatedGIFKeepsItsFramesAndIsIncomplete() throws {
        let data = AnimationBuilders.randomGIF(seed: 11, width: 40, height: 30, frameCount: 16)
        try Self.expectTruncatedKeepsWholeFrames(data, lastMayBePartial: true)
    }

    @Test func truncatedAPNGKeepsItsWholeFramesAndIsIncomplete() throws {
        try Self.expectTruncatedKeepsWholeFrames(try AnimationBuilders.randomAPNG(seed: 11, frameCount: 16), lastMayBePartial: false)
    }

    @Test(.requires(.libwebp))
    func truncatedWebPKeepsItsWholeFramesAndIsIncomplete() throws {
        try Self.expectTruncatedKeepsWholeFrames(try AnimatedWebPBuilder.random(seed: 11, frameCount: 16), lastMayBePartial: false)
    }

    /// Cut at several points: the image is incomplete, its frames are the full file's (the last one possibly
    /// partial for GIF, whose frames draw as their rows arrive), and a complete file is not incomplete.
    static func expectTruncatedKeepsWholeFrames(_ data: Data, lastMayBePartial: Bool) throws {
        let full = try ImageCodersManager.shared.decode(data)
        #expect(!full.isIncomplete)
        let fullFrames = try full.animationFrames()
        for fraction in [0.5, 0.7, 0.9] {
            let cut = try ImageCodersManager.shared.decode(data.prefix(Int(Double(data.count) * fraction)))
            #expect(cut.isIncomplete, "cut at \(fraction)")
            let frames = try cut.animationFrames()
            #expect(frames.count >= 2 && frames.count <= fullFrames.count, "cut at \(fraction): \(frames.count) frames")
            let whole = lastMayBePartial ? frames.dropLast() : frames[...]
            #expect(Array(whole) == Array(fullFrames.prefix(whole.count)), "cut at \(fraction)")
        }
    }
}

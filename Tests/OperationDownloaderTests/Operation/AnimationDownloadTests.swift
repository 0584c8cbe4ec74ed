import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import TestImages
import TestRequirements
import Testing
@testable import OperationDownloader

/// Big animations through the operation, on the scripted transport (chunk by chunk, progressive or not): a
/// valid 1000×1000 × 120-frame GIF is delivered with every frame, never as "truncated"; `.preloadAllFrames`
/// is part of the variant and fills `frames`; `.decodeFirstFrameOnly` gives a still image.
@Suite(.offThePool) struct AnimationDownloadTests {
    /// 120 full-canvas 1000×1000 frames: 120 MP in all, past the 100 MP the frames used to be capped at.
    static let bigGIF = LargeAnimations.gif(side: 1000, frames: 120)

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
        #expect(try animation.frame(at: 119) == LargeAnimations.gifFrame(119, side: 1000))
    }

    @Test func preloadAllFramesFillsFramesAndDecodeFirstFrameOnlyGivesAStill() async throws {
        let harness = ScriptedHarness()
        let small = LargeAnimations.gif(side: 40, frames: 6)
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
        #expect(eager.frames.count == 6 && eager.frames[5].pixels == LargeAnimations.gifFrame(5, side: 40))
        #expect(still.final?.image?.frameCount == 1 && still.final?.image?.animation == nil)
        let onDemand = try #require(plain.final?.image)
        #expect(onDemand.frames.isEmpty && onDemand.frameCount == 6)
    }
}

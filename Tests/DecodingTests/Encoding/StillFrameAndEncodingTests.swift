import Foundation
import Testing
import Decoding

/// The calls a newcomer reaches for (issue 37): a frame of an animation as a still image
/// (`AnimatedImage.image(at:)`), an image as PNG/JPEG bytes (`DecodedImage.encoded(as:quality:)`), and an
/// animation's length without floating-point noise.
@Suite(.offThePool) struct StillFrameAndEncodingTests {
    @Test func aFrameAsAStillImageIsThatFramesPixelsInTheAnimationsFormat() throws {
        let gif = AnimationBuilders.randomGIF(seed: 3)
        let image = try ImageCodersManager.shared.decode(gif)
        let animation = try #require(image.animation)
        let last = animation.frameCount - 1
        let still = try animation.image(at: last)
        #expect(still.width == image.width && still.height == image.height)
        #expect(still.pixels == (try animation.frame(at: last)))
        #expect(still.format == .gif && still.frameCount == 1 && still.animation == nil && !still.isIncomplete)
        #expect(throws: ImageDecodingError.self) { try animation.image(at: animation.frameCount) }
        // A thumbnail's frames are the thumbnail's size.
        let small = try ImageCodersManager.shared.decode(gif, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 8, height: 8)))
        let smallStill = try #require(small.animation).image(at: last)
        #expect(smallStill.width == small.width && smallStill.height == small.height)
    }

    @Test func encodedGivesAFileThatDecodesBack() throws {
        var pixels: [UInt8] = []
        for y in 0..<24 { for x in 0..<32 { pixels += [UInt8(x * 8), UInt8(y * 10), 40, 255] } }
        let image = DecodedImage(width: 32, height: 24, pixels: pixels, format: .undefined)
        let png = try image.encoded(as: .png)
        #expect(ImageFormat(sniffing: png) == .png)
        let back = try ImageCodersManager.shared.decode(png)
        #expect(back.width == 32 && back.height == 24 && back.pixels == pixels, "PNG is lossless")
        let jpeg = try image.encoded(as: .jpeg, quality: 0.5)
        #expect(ImageFormat(sniffing: jpeg) == .jpeg)
        #expect(throws: ImageEncodingError.self) { try image.encoded(as: .gif) }
    }

    /// Thirty frames of 0.1 s: 3.0 s, not 3.0000000000000004.
    @Test func totalDurationIsRoundedToTheMillisecond() throws {
        let frames = (0..<30).map { _ in ImageFrame(pixels: [UInt8](repeating: 0, count: 4), duration: 0.1) }
        let image = DecodedImage(width: 1, height: 1, pixels: [0, 0, 0, 0], format: .gif, frames: frames)
        #expect(image.animation?.totalDuration == 3.0)
        #expect("\(image.animation?.totalDuration ?? 0)" == "3.0")
    }
}

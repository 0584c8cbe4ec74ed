import Foundation
import Testing
@testable import Decoding

/// One size rule for every thumbnail path (issue 37): fitting into a box rounds to the nearest pixel, as Pillow's
/// `thumbnail` and libvips' `thumbnail` do: 6000×4000 into 256×256 is 256×171 (not 170).
@Suite struct ThumbnailSizeRuleTests {
    @Test func theDecodersTargetRoundsToNearest() throws {
        let box = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 256, height: 256))
        let target = try #require(ImageScaler.targetSize(width: 6000, height: 4000, options: box))
        #expect(target.width == 256 && target.height == 171)
        let portrait = try #require(ImageScaler.targetSize(width: 4000, height: 6000, options: box))
        #expect(portrait.width == 171 && portrait.height == 256)
        // A byte limit still rounds down: the result never exceeds it.
        let limited = try #require(ImageScaler.targetSize(
            width: 6000, height: 4000, options: ImageDecodingOptions(scaleDownLimitBytes: 4 * 1000 * 1000)))
        #expect(limited.width * limited.height <= 1_000_000)
    }

    @Test func resizingRoundsTheSameWay() {
        let plan = ResizePlan(width: 6000, height: 4000, boxWidth: 256, boxHeight: 256, mode: .fit, allowsUpscaling: false)
        #expect(plan.outputWidth == 256 && plan.outputHeight == 171)
    }

    /// A real JPEG decoded with a thumbnail size (DCT scaling, then the area filter) and the same image resized
    /// with Lanczos: the same size.
    @Test func aDecodedThumbnailAndAResizeAgree() throws {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(600 * 400 * 4)
        for y in 0..<400 { for x in 0..<600 { pixels += [UInt8(x % 256), UInt8(y % 256), 90, 255] } }
        let source = DecodedImage(width: 600, height: 400, pixels: pixels, format: .jpeg)
        let jpeg = try ImageCodersManager.shared.encode(source, options: ImageEncodingOptions(format: .jpeg))
        let decoded = try ImageCodersManager.shared.decode(
            jpeg, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 256, height: 256)))
        let resized = try source.resized(toWidth: 256, height: 256)
        #expect(decoded.width == 256 && decoded.height == 171)
        #expect(resized.width == 256 && resized.height == 171)
    }
}

import Foundation
import TestRequirements
import Testing
@testable import Decoding

/// `DecodedImage.resized`: geometry of fit / fill / exact, exact pixels of the filters, premultiplied alpha,
/// animations, and bad input.
@Suite(.serialized, .offThePool) struct ResizeTests {
    @Test("fit, fill and exact give the documented sizes", arguments: [
        // image, box, mode, upscaling → result
        (400, 300, 100, 100, ImageResizeMode.fit, false, 100, 75),
        (300, 400, 100, 100, .fit, false, 75, 100),
        (400, 300, 100, 100, .fill, false, 100, 100),
        (400, 300, 160, 90, .fill, false, 160, 90),
        (400, 300, 50, 80, .exact, false, 50, 80),
        (40, 30, 100, 100, .fit, false, 40, 30),       // never enlarged
        (40, 30, 100, 100, .fit, true, 100, 75),
        (40, 30, 100, 50, .fill, false, 40, 20),       // the largest 2:1 centred crop, at 1:1
        (40, 30, 100, 50, .fill, true, 100, 50),
        (40, 30, 80, 90, .exact, false, 80, 90),       // exact always reaches the box
        (1, 1000, 10, 10, .fit, false, 1, 10),         // a side never rounds to 0
    ])
    func geometry(_ w: Int, _ h: Int, _ bw: Int, _ bh: Int, _ mode: ImageResizeMode, _ up: Bool, _ ew: Int, _ eh: Int) throws {
        let image = TestImages.solid(w, h, (10, 20, 30, 255))
        let out = try image.resized(toWidth: bw, height: bh, mode: mode, allowsUpscaling: up)
        #expect(out.width == ew && out.height == eh, "\(w)x\(h) \(mode) into \(bw)x\(bh): \(out.width)x\(out.height)")
        #expect(out.pixels.count == ew * eh * 4)
    }

    @Test("the plan for the benchmark's 12 MP photo: 256×192 from the whole image")
    func twelveMegapixelPlan() {
        let plan = ResizePlan(width: 4032, height: 3024, boxWidth: 256, boxHeight: 256, mode: .fit, allowsUpscaling: false)
        #expect(plan.outputWidth == 256 && plan.outputHeight == 192)
        #expect(plan.source == ResizePlan.Source(x: 0, y: 0, width: 4032, height: 3024))
        let fill = ResizePlan(width: 4032, height: 3024, boxWidth: 256, boxHeight: 256, mode: .fill, allowsUpscaling: false)
        #expect(fill.outputWidth == 256 && fill.source == ResizePlan.Source(x: 504, y: 0, width: 3024, height: 3024))
    }

    @Test("a single colour stays exactly that colour with every filter, also when enlarging")
    func uniformStaysUniform() throws {
        let image = TestImages.solid(37, 23, (200, 100, 50, 255))
        for filter in ResamplingFilter.allCases {
            for (w, h) in [(10, 7), (5, 20), (90, 61)] {
                let out = try image.resized(width: w, height: h, filter: filter)
                #expect(Set(stride(from: 0, to: out.pixels.count, by: 4).map { Array(out.pixels[$0..<$0 + 4]) })
                        == [[200, 100, 50, 255]], "\(filter) \(w)x\(h)")
            }
        }
    }

    @Test("area filter: each output pixel is the exact mean of the 2×2 block it covers")
    func areaExactMeans() throws {
        let image = TestImages.make(4, 2) { x, _ in x < 2 ? (0, 100, 200, 255) : (40, 60, 80, 255) }
        let out = try image.resized(width: 2, height: 1, filter: .area)
        #expect(out.pixels == [0, 100, 200, 255, 40, 60, 80, 255])
        // A one-pixel checkerboard halves to mid-gray (127.5 rounds up).
        let checker = TestImages.make(8, 8) { x, y in (x + y) % 2 == 0 ? (255, 255, 255, 255) : (0, 0, 0, 255) }
        let gray = try checker.resized(width: 4, height: 4, filter: .area)
        #expect(Set(gray.pixels) == [128, 255])
    }

    @Test("Lanczos-3 matches Pillow's LANCZOS within 1 (values from Pillow 13)")
    func lanczosMatchesPillow() throws {
        let row = TestImages.make(12, 1) { x, _ in let v = UInt8(x * 23); return (v, v, v, 255) }
        let out = try row.resized(width: 5, height: 1, filter: .lanczos3)
        let reds = stride(from: 0, to: out.pixels.count, by: 4).map { Int(out.pixels[$0]) }
        for (ours, pillow) in zip(reds, [16, 70, 127, 183, 237]) { #expect(abs(ours - pillow) <= 1, "\(reds)") }

        let checker = TestImages.make(8, 8) { x, y in
            let v: UInt8 = (x / 2 + y / 2) % 2 == 0 ? 255 : 0
            return (v, v, v, 255)
        }
        let small = try checker.resized(width: 3, height: 3, filter: .lanczos3)
        let grays = stride(from: 0, to: small.pixels.count, by: 4).map { Int(small.pixels[$0]) }
        for (ours, pillow) in zip(grays, [137, 127, 118, 127, 127, 127, 118, 127, 137]) {
            #expect(abs(ours - pillow) <= 1, "\(grays)")
        }
    }

    @Test("premultiplied alpha: transparent pixels never darken or tint their opaque neighbours")
    func noDarkFringes() throws {
        // Left half fully transparent BLACK, right half opaque white: straight-alpha filtering would give gray.
        let image = TestImages.make(16, 4) { x, _ in x < 8 ? (0, 0, 0, 0) : (255, 255, 255, 255) }
        for filter in ResamplingFilter.allCases {
            let out = try image.resized(width: 5, height: 2, filter: filter)
            var sawPartial = false
            for i in stride(from: 0, to: out.pixels.count, by: 4) where out.pixels[i + 3] > 0 {
                #expect(Array(out.pixels[i..<i + 3]) == [255, 255, 255], "\(filter): \(Array(out.pixels[i..<i + 4]))")
                if out.pixels[i + 3] < 255 { sawPartial = true }
            }
            #expect(sawPartial, "\(filter): the edge pixel should be partly transparent")
        }
    }

    @Test("fill crops the centre: the middle of the image stays the middle")
    func fillKeepsTheCentre() throws {
        // Red left third, green middle, blue right third; a square fill keeps only green columns.
        let image = TestImages.make(300, 100) { x, _ in x < 100 ? (255, 0, 0, 255) : x < 200 ? (0, 255, 0, 255) : (0, 0, 255, 255) }
        let area = try image.resized(toWidth: 50, height: 50, mode: .fill, filter: .area)
        #expect(TestImages.pixel(area, 0, 25) == [0, 255, 0, 255])
        #expect(TestImages.pixel(area, 49, 25) == [0, 255, 0, 255])
        // Lanczos also reads a few pixels beyond the crop (as resize-then-crop would): mostly green at the edges.
        let lanczos = try image.resized(toWidth: 50, height: 50, mode: .fill)
        for x in [0, 49] {
            let p = TestImages.pixel(lanczos, x, 25)
            #expect(p[1] > 220 && p[0] < 30 && p[2] < 30, "\(p)")
        }
        #expect(TestImages.pixel(lanczos, 25, 25) == [0, 255, 0, 255])
    }

    @Test("every animation frame is resized; durations, loop count and metadata are kept")
    func animation() throws {
        let a = TestImages.solid(20, 10, (255, 0, 0, 255)), b = TestImages.solid(20, 10, (0, 0, 255, 128))
        let animated = DecodedImage(
            width: 20, height: 10, pixels: a.pixels, format: .gif, scale: 2, orientation: .up,
            frames: [ImageFrame(pixels: a.pixels, duration: 0.1), ImageFrame(pixels: b.pixels, duration: 0.25)],
            loopCount: 3)
        let out = try animated.resized(toWidth: 10, height: 10)
        #expect(out.width == 10 && out.height == 5)
        #expect(out.frames.count == 2 && out.frames.map(\.duration) == [0.1, 0.25])
        #expect(out.frames[1].pixels.count == 10 * 5 * 4 && TestImages.pixel(DecodedImage(
            width: 10, height: 5, pixels: out.frames[1].pixels, format: .gif), 3, 3) == [0, 0, 255, 128])
        #expect(out.pixels == out.frames[0].pixels)
        #expect(out.loopCount == 3 && out.scale == 2 && out.format == .gif)
    }

    @Test("linear light: a black/white checkerboard averages to sRGB 188, not 128")
    func linearLight() throws {
        let checker = TestImages.make(8, 8) { x, y in (x + y) % 2 == 0 ? (255, 255, 255, 255) : (0, 0, 0, 255) }
        let out = try checker.resized(toWidth: 4, height: 4, filter: .area, linearLight: true)
        // Half of full light is linear 0.5 → sRGB 187.5; the 4096-step table lands on 187 or 188.
        #expect(stride(from: 0, to: out.pixels.count, by: 4).allSatisfy { (187...188).contains(out.pixels[$0]) })
    }

    @Test("bad sizes and malformed buffers throw typed errors")
    func errors() {
        let image = TestImages.solid(4, 4, (0, 0, 0, 255))
        #expect(throws: ImageProcessingError.invalidSize(width: 0, height: 10)) { try image.resized(toWidth: 0, height: 10) }
        #expect(throws: ImageProcessingError.invalidSize(width: 10, height: 70_000)) { try image.resized(width: 10, height: 70_000) }
        let broken = DecodedImage(width: 4, height: 4, pixels: [1, 2, 3], format: .png)
        #expect(throws: ImageProcessingError.malformedImage) { try broken.resized(toWidth: 2, height: 2) }
    }

    @Test("an image already of the result size comes back unchanged")
    func identity() throws {
        let image = TestImages.coordinates(30, 20)
        #expect(try image.resized(toWidth: 30, height: 20) == image)
        #expect(try image.resized(toWidth: 60, height: 40) == image)   // fit without upscaling
    }
}

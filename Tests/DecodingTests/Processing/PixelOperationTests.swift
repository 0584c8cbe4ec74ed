import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Crop, rounded corners and circle, blur, grayscale, flips, rotations and EXIF orientation: golden sizes
/// and exact pixels.
@Suite(.serialized, .offThePool) struct PixelOperationTests {
    // MARK: crop

    @Test func cropRectIsClippedToTheImage() throws {
        let image = TestImages.coordinates(10, 8)
        let out = try image.cropped(to: PixelRect(x: 6, y: 5, width: 10, height: 10))
        #expect(out.width == 4 && out.height == 3)
        #expect(TestImages.pixel(out, 0, 0) == [6, 5, 11, 255])
        #expect(TestImages.pixel(out, 3, 2) == [9, 7, 16, 255])
        #expect(throws: ImageProcessingError.emptyCrop) { try image.cropped(to: PixelRect(x: 10, y: 0, width: 5, height: 5)) }
        #expect(throws: ImageProcessingError.emptyCrop) { try image.cropped(to: PixelRect(x: 0, y: 0, width: 0, height: 5)) }
        #expect(throws: ImageProcessingError.emptyCrop) { try image.cropped(to: PixelRect(x: Int.max, y: 0, width: Int.max, height: 5)) }
    }

    @Test func centreAndAspectCrops() throws {
        let image = TestImages.coordinates(10, 8)
        let centre = try image.croppedToCenter(width: 4, height: 20)
        #expect(centre.width == 4 && centre.height == 8 && TestImages.pixel(centre, 0, 0) == [3, 0, 3, 255])
        let square = try image.cropped(toAspectRatio: 1)
        #expect(square.width == 8 && square.height == 8 && TestImages.pixel(square, 0, 0) == [1, 0, 1, 255])
        let wide = try image.cropped(toAspectRatio: 5)
        #expect(wide.width == 10 && wide.height == 2 && TestImages.pixel(wide, 0, 0) == [0, 3, 3, 255])
        #expect(throws: ImageProcessingError.self) { try image.cropped(toAspectRatio: 0) }
        #expect(throws: ImageProcessingError.self) { try image.cropped(toAspectRatio: .nan) }
    }

    // MARK: corners

    @Test("rounded corners: antialiased alpha values, mirrored in all four corners, inside untouched")
    func roundedCornerAlpha() throws {
        let image = TestImages.solid(10, 10, (9, 8, 7, 255))
        let out = try image.roundingCorners(radius: 4)
        // Coverage clamp(r + 0.5 - distance) of the top-left 4×4 square (computed by hand for r = 4).
        let expected: [[UInt8]] = [[0, 51, 176, 246], [51, 246, 255, 255], [176, 255, 255, 255], [246, 255, 255, 255]]
        for y in 0..<4 {
            for x in 0..<4 {
                let a = expected[y][x]
                #expect(TestImages.pixel(out, x, y)[3] == a, "(\(x),\(y))")
                #expect(TestImages.pixel(out, 9 - x, y)[3] == a)
                #expect(TestImages.pixel(out, x, 9 - y)[3] == a)
                #expect(TestImages.pixel(out, 9 - x, 9 - y)[3] == a)
            }
        }
        #expect(TestImages.pixel(out, 5, 0) == [9, 8, 7, 255] && TestImages.pixel(out, 5, 5) == [9, 8, 7, 255])
        // Only the chosen corners change; existing alpha is multiplied, colour kept.
        let half = try TestImages.solid(10, 10, (9, 8, 7, 128)).roundingCorners(radius: 4, corners: [.topRight])
        #expect(TestImages.pixel(half, 0, 0)[3] == 128 && TestImages.pixel(half, 9, 0) == [9, 8, 7, 0])
        #expect(TestImages.pixel(half, 8, 1) == [9, 8, 7, 123])   // 128 × 0.9645, rounded
        #expect(throws: ImageProcessingError.self) { try image.roundingCorners(radius: -1) }
    }

    @Test("circle: the centred square, transparent corners, opaque middle and edge midpoints")
    func circle() throws {
        let out = try TestImages.solid(15, 9, (1, 2, 3, 255)).circleCropped()
        #expect(out.width == 9 && out.height == 9)
        #expect(TestImages.pixel(out, 0, 0)[3] == 0 && TestImages.pixel(out, 8, 8)[3] == 0)
        #expect(TestImages.pixel(out, 4, 4)[3] == 255 && TestImages.pixel(out, 0, 4)[3] == 255 && TestImages.pixel(out, 4, 0)[3] == 255)
        let alphas = stride(from: 3, to: out.pixels.count, by: 4).map { out.pixels[$0] }
        #expect(alphas.contains { $0 > 0 && $0 < 255 }, "antialiased edge")
        // Symmetric under every flip and the transpose.
        #expect(try out.flipped(horizontally: true, vertically: false) == out)
        #expect(try out.rotated(quarterTurns: 1) == out)
    }

    // MARK: blur

    @Test("blur: uniform stays uniform, a dot spreads symmetrically and keeps its energy")
    func blur() throws {
        let flat = TestImages.solid(9, 7, (50, 60, 70, 255))
        #expect(try flat.blurred(sigma: 2) == flat)
        #expect(try flat.blurred(sigma: 0) == flat)
        let dot = TestImages.make(21, 21) { x, y in x == 10 && y == 10 ? (255, 255, 255, 255) : (0, 0, 0, 255) }
        let out = try dot.blurred(sigma: 1.5)
        let centre = Int(TestImages.pixel(out, 10, 10)[0])
        #expect(centre > 0 && centre < 255)
        #expect(TestImages.pixel(out, 7, 10) == TestImages.pixel(out, 13, 10))
        #expect(TestImages.pixel(out, 10, 7) == TestImages.pixel(out, 7, 10))
        let total = stride(from: 0, to: out.pixels.count, by: 4).reduce(0) { $0 + Int(out.pixels[$1]) }
        #expect(abs(total - 255) <= 12, "\(total)")   // rounding of ~50 small values
        #expect(throws: ImageProcessingError.self) { try flat.blurred(sigma: -1) }
        #expect(throws: ImageProcessingError.self) { try flat.blurred(sigma: 1000) }
        let kernel = DecodedImage.gaussianKernel(sigma: 1)
        #expect(kernel.count == 7 && abs(kernel.reduce(0, +) - 1) < 1e-12 && kernel[3] > 0.38 && kernel[3] < 0.39)
    }

    // MARK: grayscale

    @Test("grayscale: Rec. 709 weights, alpha kept")
    func grayscale() throws {
        let image = TestImages.make(3, 1) { x, _ in [(255, 0, 0, 255), (0, 255, 0, 10), (0, 0, 255, 0)][x] }
        let out = try image.grayscaled()
        #expect(out.pixels == [54, 54, 54, 255, 182, 182, 182, 10, 19, 19, 19, 0])
    }

    // MARK: orientation

    /// Where display pixel (x, y) comes from in a `w`×`h` stored image, per EXIF 2.3's definitions.
    static func source(_ o: ImageOrientation, _ x: Int, _ y: Int, _ w: Int, _ h: Int) -> (Int, Int) {
        switch o {
        case .up: return (x, y)
        case .upMirrored: return (w - 1 - x, y)
        case .down: return (w - 1 - x, h - 1 - y)
        case .downMirrored: return (x, h - 1 - y)
        case .leftMirrored: return (y, x)
        case .right: return (y, h - 1 - x)
        case .rightMirrored: return (w - 1 - y, h - 1 - x)
        case .left: return (w - 1 - y, x)
        }
    }

    @Test("orientedUp applies each of the 8 EXIF orientations", arguments: ImageOrientation.allCases)
    func orientation(_ orientation: ImageOrientation) throws {
        let (w, h) = (5, 3)
        let image = TestImages.coordinates(w, h, orientation: orientation)
        let out = try image.orientedUp()
        #expect(out.orientation == .up)
        #expect(out.width == (orientation.swapsDimensions ? h : w) && out.height == (orientation.swapsDimensions ? w : h))
        for y in 0..<out.height {
            for x in 0..<out.width {
                let (sx, sy) = Self.source(orientation, x, y, w, h)
                #expect(TestImages.pixel(out, x, y) == TestImages.pixel(image, sx, sy), "\(orientation) (\(x),\(y))")
            }
        }
    }

    @Test("the corpus' exif_orientation files: same stored pixels, each turned by its own tag", .requires(.corpus))
    func corpusOrientations() throws {
        let stored = try JPEGCoder().decode(try Corpus.data("generated/exif_orientation_1.jpg"), options: .init())
        for n in 2...8 {
            let image = try JPEGCoder().decode(try Corpus.data("generated/exif_orientation_\(n).jpg"), options: .init())
            let orientation = try #require(ImageOrientation(rawValue: n))
            #expect(image.orientation == orientation && image.pixels == stored.pixels)
            let shown = try image.orientedUp()
            #expect(shown.width == (n >= 5 ? 64 : 96) && shown.orientation == .up, "orientation \(n)")
            for (x, y) in [(0, 0), (shown.width - 1, 0), (0, shown.height - 1), (shown.width / 2, shown.height / 3)] {
                let (sx, sy) = Self.source(orientation, x, y, stored.width, stored.height)
                #expect(TestImages.pixel(shown, x, y) == TestImages.pixel(stored, sx, sy), "orientation \(n) (\(x),\(y))")
            }
        }
    }

    @Test("flips and quarter turns keep the orientation field; four turns are the identity")
    func flipsAndRotations() throws {
        let image = TestImages.coordinates(4, 3, orientation: .right)
        let h = try image.flipped(horizontally: true, vertically: false)
        #expect(TestImages.pixel(h, 0, 0) == TestImages.pixel(image, 3, 0) && h.orientation == .right)
        let v = try image.flipped(horizontally: false, vertically: true)
        #expect(TestImages.pixel(v, 0, 0) == TestImages.pixel(image, 0, 2))
        let turned = try image.rotated(quarterTurns: 1)
        #expect(turned.width == 3 && turned.height == 4 && turned.orientation == .right)
        #expect(TestImages.pixel(turned, 0, 0) == TestImages.pixel(image, 0, 2))   // clockwise: bottom-left goes top-left
        #expect(try image.rotated(quarterTurns: 4) == image)
        #expect(try image.rotated(quarterTurns: -1) == image.rotated(quarterTurns: 3))
        #expect(try image.rotated(quarterTurns: 2) == image.flipped(horizontally: true, vertically: true))
    }
}

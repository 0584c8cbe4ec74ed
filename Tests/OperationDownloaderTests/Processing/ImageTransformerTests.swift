import Foundation
import Decoding
import OperationDownloader
import Testing

/// The built-in `ImageTransformer`s: stable keys, what each does to a small image, pipelines, and errors.
@Suite struct ImageTransformerTests {
    private func image(_ width: Int, _ height: Int, orientation: ImageOrientation = .up) -> DecodedImage {
        var pixels: [UInt8] = []
        for y in 0..<height { for x in 0..<width { pixels += [UInt8(x % 256), UInt8(y % 256), 100, 255] } }
        return DecodedImage(width: width, height: height, pixels: pixels, format: .jpeg, orientation: orientation)
    }

    private func alpha(_ image: DecodedImage, _ x: Int, _ y: Int) -> UInt8 { image.pixels[(y * image.width + x) * 4 + 3] }

    @Test("every built-in transformer has a stable, parameter-bearing key")
    func keys() {
        let cases: [(any ImageTransformer, String)] = [
            (ImageResizingTransformer(width: 256, height: 256), "resize(fit,256x256,lanczos3)"),
            (ImageResizingTransformer(width: 100, height: 50, mode: .fill, filter: .area, allowsUpscaling: true),
             "resize(fill,100x50,area,upscale)"),
            (ImageResizingTransformer(width: 64, height: 64, mode: .exact, linearLight: true), "resize(exact,64x64,lanczos3,linear)"),
            (ImageCroppingTransformer(.rect(PixelRect(x: 10, y: 20, width: 100, height: 50))), "crop(rect:10,20,100x50)"),
            (ImageCroppingTransformer(.center(width: 100, height: 80)), "crop(center:100x80)"),
            (ImageCroppingTransformer(.aspectRatio(1.5)), "crop(aspect:1.5)"),
            (ImageRoundCornerTransformer(radius: 12), "roundCorners(12.0,15)"),
            (ImageRoundCornerTransformer(radius: 8, corners: [.topLeft, .bottomRight]), "roundCorners(8.0,9)"),
            (ImageRoundCornerTransformer.circle, "circle"),
            (ImageBlurTransformer(sigma: 2.5), "blur(2.5)"),
            (ImageGrayscaleTransformer(), "grayscale"),
            (ImageFlippingTransformer(horizontal: true, vertical: false), "flip(h)"),
            (ImageFlippingTransformer(horizontal: true, vertical: true), "flip(hv)"),
            (ImageRotationTransformer(quarterTurns: -1), "rotate(270)"),
            (ImageRotationTransformer(quarterTurns: 5), "rotate(90)"),
            (ImageOrientationTransformer(), "orientUp"),
        ]
        for (transformer, key) in cases { #expect(transformer.key == key) }
        #expect(Set(cases.map(\.0.key)).count == cases.count)
    }

    @Test("pipelines join keys with |, escape separators, flatten nesting, and run in order")
    func pipeline() throws {
        let resize = ImageResizingTransformer(width: 10, height: 10, mode: .fill)
        let round = ImageRoundCornerTransformer(radius: 3)
        let pipeline = ImagePipelineTransformer([resize, round])
        #expect(pipeline.key == "resize(fill,10x10,lanczos3)|roundCorners(3.0,15)")
        #expect(ImagePipelineTransformer([ImagePipelineTransformer([resize]), round]).key == pipeline.key)
        #expect(ImagePipelineTransformer([]).key == "identity")
        #expect(ImagePipelineTransformer([Named(key: "a|b"), Named(key: "c")]).key == #"a\|b|c"#)
        #expect(ImagePipelineTransformer([Named(key: "a"), Named(key: "b|c")]).key == #"a|b\|c"#)

        let out = try pipeline.transform(image(40, 20))
        #expect(out.width == 10 && out.height == 10)
        #expect(alpha(out, 0, 0) == 0 && alpha(out, 5, 5) == 255)
        // Order matters: rounding first, then a fill crop, cuts the rounded corners away.
        let reversed = try ImagePipelineTransformer([round, resize]).transform(image(40, 20))
        #expect(alpha(reversed, 0, 0) == 255)
        #expect(try ImagePipelineTransformer([]).transform(image(3, 2)) == image(3, 2))
    }

    @Test("each transformer does what its name says")
    func transforms() throws {
        let source = image(40, 20, orientation: .right)
        #expect(try ImageResizingTransformer(width: 20, height: 20).transform(source).width == 20)
        #expect(try ImageResizingTransformer(width: 20, height: 20).transform(source).height == 10)
        #expect(try ImageCroppingTransformer(.aspectRatio(1)).transform(source).width == 20)
        var dot = [UInt8](repeating: 0, count: 9 * 9 * 4)
        for i in stride(from: 3, to: dot.count, by: 4) { dot[i] = 255 }
        dot[(4 * 9 + 4) * 4] = 255
        let blurred = try ImageBlurTransformer(sigma: 1).transform(DecodedImage(width: 9, height: 9, pixels: dot, format: .png))
        #expect(blurred.width == 9 && blurred.pixels[(4 * 9 + 4) * 4] < 255 && blurred.pixels[(4 * 9 + 5) * 4] > 0)
        let gray = try ImageGrayscaleTransformer().transform(source)
        #expect(gray.pixels[4] == gray.pixels[5] && gray.pixels[5] == gray.pixels[6])
        let flipped = try ImageFlippingTransformer(horizontal: true, vertical: false).transform(source)
        #expect(flipped.pixels[0] == 39)
        let turned = try ImageRotationTransformer(quarterTurns: 1).transform(source)
        #expect(turned.width == 20 && turned.height == 40 && turned.orientation == .right)
        let upright = try ImageOrientationTransformer().transform(source)
        #expect(upright.width == 20 && upright.height == 40 && upright.orientation == .up)
        let circle = try ImageRoundCornerTransformer.circle.transform(source)
        #expect(circle.width == 20 && alpha(circle, 0, 0) == 0 && alpha(circle, 10, 10) == 255)
    }

    @Test("bad parameters throw ImageProcessingError instead of trapping")
    func errors() {
        let source = image(4, 4)
        #expect(throws: ImageProcessingError.invalidSize(width: 0, height: 5)) {
            try ImageResizingTransformer(width: 0, height: 5).transform(source)
        }
        #expect(throws: ImageProcessingError.emptyCrop) {
            try ImageCroppingTransformer(.rect(PixelRect(x: 10, y: 10, width: 2, height: 2))).transform(source)
        }
        #expect(throws: ImageProcessingError.self) { try ImageBlurTransformer(sigma: -2).transform(source) }
        #expect(throws: ImageProcessingError.self) { try ImageRoundCornerTransformer(radius: .infinity).transform(source) }
        // A failing step fails the whole pipeline with its own error.
        #expect(throws: ImageProcessingError.emptyCrop) {
            try ImagePipelineTransformer([ImageGrayscaleTransformer(), ImageCroppingTransformer(.rect(PixelRect(x: 9, y: 9, width: 1, height: 1)))])
                .transform(source)
        }
    }
}

/// A transformer with a given key, for the escaping checks.
private struct Named: ImageTransformer {
    let key: String
    func transform(_ image: DecodedImage) throws -> DecodedImage { image }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// TIFF layouts libtiff's RGBA interface refuses or converts differently (issue 20): read as samples by the shim
/// (cic_tiff_samples.c) with the rules Docs/Decoding.md names, and CIELab through lcms2.
@Suite(.requires(.libtiff), .offThePool) struct TIFFSampleLayoutTests {
    let coder = TIFFCoder()

    private func gray(_ image: DecodedImage) -> [UInt8] {
        stride(from: 0, to: image.pixels.count, by: 4).map { image.pixels[$0] }
    }

    @Test func floatSamplesClampToZeroToOneAndRound() throws {
        let values: [Float] = [-0.5, 0, 0.25, 0.5, 1, 2, .nan, .infinity]
        let data = values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        let file = TIFFBuilder.file(width: values.count, height: 1, bitsPerSample: [32], photometric: 1, sampleFormat: 3, data: data)
        let image = try coder.decode(file, options: ImageDecodingOptions())
        #expect(gray(image) == [0, 0, 64, 128, 255, 255, 0, 255])
        #expect(stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 255 })
    }

    @Test func thirtyTwoBitIntegersKeepTheirTopByte() throws {
        let values: [UInt32] = [0, 0x00FF_FFFF, 0x0100_0000, 0x8000_0000, 0xFFFF_FFFF]
        let data = values.flatMap { value in withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        let file = TIFFBuilder.file(width: values.count, height: 1, bitsPerSample: [32], photometric: 1, data: data)
        #expect(gray(try coder.decode(file, options: ImageDecodingOptions())) == [0, 0, 1, 128, 255])
    }

    /// Signed samples show as libtiff's RGBA interface and Pillow show them: their bits read as unsigned, so the
    /// positive range reaches mid-grey (it used to be stretched to white: twice as bright as both).
    @Test func signedSamplesAreReadAsTheirUnsignedBits() throws {
        let values: [Int16] = [-32768, -1, 0, 256, 32767]
        let data = values.flatMap { value in withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        let file = TIFFBuilder.file(width: values.count, height: 1, bitsPerSample: [16], photometric: 1, sampleFormat: 2, data: data)
        #expect(gray(try coder.decode(file, options: ImageDecodingOptions())) == [128, 255, 0, 1, 127])
        let bytes: [Int8] = [-128, -1, 0, 1, 127]
        let file8 = TIFFBuilder.file(width: bytes.count, height: 1, bitsPerSample: [8], photometric: 1, sampleFormat: 2,
                                     data: bytes.map { UInt8(bitPattern: $0) })
        #expect(gray(try coder.decode(file8, options: ImageDecodingOptions())) == [128, 255, 0, 1, 127])
    }

    @Test func twelveBitCMYKIsReadAndConvertedLikePillow() throws {
        // Pixel 1: full cyan. Pixel 2: half black (0x800 -> 128) with 25% magenta (0x400 -> 64).
        let samples = [0xFFF, 0, 0, 0, 0, 0x400, 0, 0x800]
        let file = TIFFBuilder.file(width: 2, height: 1, bitsPerSample: [12, 12, 12, 12], photometric: 5,
                                    data: TIFFBuilder.packBits(samples, bits: 12))
        let image = try coder.decode(file, options: ImageDecodingOptions())
        // R = (255 - K) - round((255 - K) * C / 255): 127 - round(127 * 64 / 255) = 95 for green.
        #expect(image.pixels == [0, 255, 255, 255, 127, 95, 127, 255])
    }

    @Test func cmykAlphaStaysStraight() throws {
        let file = TIFFBuilder.file(width: 1, height: 1, bitsPerSample: [16, 16, 16, 16, 16], photometric: 5,
                                    extraSamples: [2], data: [0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0x40])
        #expect(try coder.decode(file, options: ImageDecodingOptions()).pixels == [255, 127, 255, 64])
    }

    @Test(.requires(.lcms2)) func cieLabConvertsThroughLCMS2() throws {
        // CIELab 8-bit: L 255 = 100, a = b = 0 (white); L 0 (black); L 50%, a = +80 (a saturated red).
        let file = TIFFBuilder.file(width: 3, height: 1, bitsPerSample: [8, 8, 8], photometric: 8,
                                    data: [255, 0, 0, 0, 0, 0, 128, 80, 0])
        let image = try coder.decode(file, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(image.colorState == .convertedToSRGB(from: TIFFLabConversion.sourceDescription))
        // lcms2's D50 white and black land within a level or two of sRGB's (perceptual intent).
        #expect(image.pixels[0..<3].allSatisfy { $0 >= 253 } && image.pixels[4..<7].allSatisfy { $0 <= 2 })
        #expect(image.pixels[8] > 200 && image.pixels[9] < 60 && image.iccProfile == nil)
        #expect(stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 255 })
    }

    @Test func cieLabWithoutLCMS2FallsBackToLibtiffsModel() throws {
        let withoutLCMS = TIFFCoder(soname: LibTIFF.defaultSoname, labSoname: "liblcms2-not-installed.so.9")
        let file = TIFFBuilder.file(width: 2, height: 1, bitsPerSample: [8, 8, 8], photometric: 8, data: [255, 0, 0, 0, 0, 0])
        let image = try withoutLCMS.decode(file, options: ImageDecodingOptions())
        guard case .convertedToSRGB(let from) = image.colorState else {
            Issue.record("expected a converted state naming libtiff, got \(image.colorState)")
            return
        }
        #expect(from.contains("libtiff") && from.contains("liblcms2-not-installed.so.9"))
        #expect(image.pixels[0] >= 250 && image.pixels[4] <= 5)
    }

    @Test(.requires(.lcms2)) func cmykWithAProfileConvertsThroughItUnlessKeptOriginal() throws {
        let name = "tiff-cmyk8-icc.tif"
        let entry = try #require(FormatVariants.expected[name])
        let data = try FormatVariants.data(name)
        // Managed: lcms2 through the embedded CMYK profile, as Pillow's ImageCms converts the same samples.
        let managed = try ImageCodersManager.shared.decode(data)
        #expect(SHA256.hex(managed.pixels) == entry.managed_sha256_rgba)
        #expect(managed.iccProfile == nil)
        guard case .convertedToSRGB = managed.colorState else {
            Issue.record("expected a conversion through the profile, got \(managed.colorState)")
            return
        }
        // Kept: the naive formula (Pillow's), the profile handed back, the state saying why.
        let kept = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(SHA256.hex(kept.pixels) == entry.sha256_rgba)
        #expect(kept.iccProfile != nil && !kept.colorState.isSRGB)
    }

    @Test func aTruncatedSampleStripGivesAPartialImage() throws {
        // 32-bit float gray, 4x4, one strip per row: cut inside the third strip.
        let values = (0..<16).map { Float($0) / 15 }
        let data = values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        let whole = TIFFBuilder.file(width: 4, height: 4, bitsPerSample: [32], photometric: 1, sampleFormat: 3,
                                     strips: 4, data: data)
        let cut = whole.prefix(whole.count - 24)
        let image = try coder.decode(Data(cut), options: ImageDecodingOptions())
        #expect(image.isIncomplete)
        #expect(gray(image)[0..<8] == gray(try coder.decode(whole, options: ImageDecodingOptions()))[0..<8])
    }

    @Test func damagedSampleLayoutsDecodeOrThrowTyped() throws {
        var random = SeededRandom(seed: 20)
        for name in ["tiff-cmyk12.tif", "tiff-rgb-float32-predictor3-tiled.tif", "tiff-gray-int32-be.tif",
                     "tiff-rgb-uint12-planar.tif", "tiff-cmyk16-lzw-tiled.tif", "tiff-cielab16.tif"] {
            expectBitFlippedCopiesDecodeOrThrowTyped(try FormatVariants.data(name), with: coder, copies: 80, bitsPerCopy: 3,
                                                     keepingFirst: 4, using: &random, name)
        }
    }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// HEIF/HEIC/AVIF through libheif (dlopen): corpus outcomes, hostile input, and the behaviour without the library.
@Suite(.serialized, .offThePool) struct HEIFCoderTests {
    let coder = HEIFCoder()

    @Test(.requires(.corpus, .libheif))
    func avifMatchesTheReferenceWithinTolerance() throws {
        let files = Corpus.files(format: "avif")
        #expect(files.count >= 3)
        for path in files {
            let entry = try #require(Corpus.expected[path])
            let image = try coder.decode(try Corpus.data(path), options: ImageDecodingOptions())
            #expect(image.format == .avif)
            #expect(image.width == entry.width && image.height == entry.height, "\(path)")
            #expect(image.orientation == .up)
            #expect(image.frames.isEmpty)
            // YUV->RGB conversion differs between libavif (the reference) and libheif: thumb16 MAE <= 2.
            let reference = try #require(entry.thumb16_rgba_b64.flatMap { Data(base64Encoded: $0) }, "\(path)")
            let mae = PixelComparison.meanAbsoluteError(PixelComparison.thumb16(image), Array(reference))
            #expect(mae <= 2, "\(path): thumb16 MAE \(mae)")
        }
    }

    @Test(.requires(.corpus, .libheif))
    func transparencyIsKept() throws {
        let image = try coder.decode(try Corpus.data("pillow/avif_transparency.avif"), options: ImageDecodingOptions())
        let alphas = stride(from: 3, to: image.pixels.count, by: 4).map { image.pixels[$0] }
        #expect(alphas.contains(0) || alphas.contains { $0 < 255 })
        #expect(alphas.contains(255))
    }

    @Test(.requires(.corpus, .libheif))
    func heicFilesDecodeToSaneImages() throws {
        // Pillow has no HEIC support (no reference hashes); libheif 1.15.1 with libde265 decodes these.
        let expectedSizes = [
            "sdwebimage/TestHDR.heic": (600, 400), "sdwebimage/TestImage.heic": (1440, 960),
            "sdwebimage/TestImage.heif": (1440, 960), "sdwebimage/TestImageAnimated.heics": (256, 144),
        ]
        #expect(Set(Corpus.files(format: "heic")) == Set(expectedSizes.keys))
        for (path, size) in expectedSizes {
            let image = try coder.decode(try Corpus.data(path), options: ImageDecodingOptions())
            #expect(image.format == .heic, "\(path)")
            #expect(image.width == size.0 && image.height == size.1, "\(path)")
            #expect(image.pixels.count == size.0 * size.1 * 4)
            // Not a blank canvas: real picture content with several distinct colours.
            let sample = Set(stride(from: 0, to: image.pixels.count, by: 4 * 97).map { image.pixels[$0] })
            #expect(sample.count > 16, "\(path)")
        }
    }

    @Test(.requires(.corpus, .libheif))
    func pixelLimitIsCheckedBeforeDecoding() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 100_000
        #expect(throws: ImageDecodingError.tooLarge(width: 1440, height: 960)) {
            try coder.decode(try Corpus.data("sdwebimage/TestImage.heic"), options: options)
        }
    }

    @Test(.requires(.corpus, .libheif))
    func damagedFilesGiveTypedErrors() throws {
        let original = try Corpus.data("pillow/avif_hopper.avif")
        for length in [0, 12, 40, 200, original.count / 2, original.count - 10] {
            #expect(throws: ImageDecodingError.self, "length \(length)") {
                try coder.decode(original.prefix(length), options: ImageDecodingOptions())
            }
        }
        var rng = SeededRandom(seed: 11)
        for path in ["pillow/avif_hopper.avif", "sdwebimage/TestHDR.heic"] {
            expectBitFlippedCopiesDecodeOrThrowTyped(try Corpus.data(path), with: coder, copies: 40, bitsPerCopy: 3,
                                                     using: &rng, path)
        }
    }

    @Test(.requires(.corpus, .libheif))
    func cutDownloadsAreTruncated() throws {
        for path in ["pillow/avif_hopper.avif", "sdwebimage/TestImage.heic"] {
            let data = try Corpus.data(path)
            for length in [0, 30, data.count / 10, data.count / 2, data.count - 1] {
                #expect(throws: ImageDecodingError.truncated, "\(path) cut at \(length)") {
                    try coder.decode(data.prefix(length), options: ImageDecodingOptions())
                }
            }
        }
        // A complete ftyp box and nothing else is not a cut file but an empty one.
        let ftyp: [UInt8] = [0, 0, 0, 0x18] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8)
        let error = #expect(throws: ImageDecodingError.self) { try coder.decode(Data(ftyp), options: ImageDecodingOptions()) }
        if case .corrupt = error {} else { Issue.record("expected .corrupt, got \(String(describing: error))") }
    }

    @Test(.requires(.corpus, .libheif))
    func builtInManagerDecodesIt() throws {
        #expect(ImageCodersManager().coders.contains { $0 is HEIFCoder })
        let image = try ImageCodersManager().decode(try Corpus.data("pillow/avif_hopper.avif"))
        #expect(image.format == .avif)
        #expect(image.width == 128 && image.height == 128)
    }

    @Test func missingLibraryGivesUnsupportedFormat() throws {
        let missing = HEIFCoder(soname: "libheif-not-installed.so.99")
        #expect(missing.unavailableReason?.contains("libheif-not-installed.so.99") == true)
        #expect(missing.libraryVersion == nil)
        let ftyp = Data([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        #expect(missing.canDecode(ftyp))
        #expect(throws: ImageDecodingError.unsupportedFormat) { try missing.decode(ftyp, options: ImageDecodingOptions()) }
    }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Defects found by decoding an independent corpus of ~1,400 files with Pillow as the oracle (issue 12,
/// point 11). Each fixture reproduces one defect; each must now match its reference exactly, through
/// the manager and through chunked incremental decoding.
@Suite(.serialized, .offThePool) struct OutsideCorpusDefectTests {

    /// Decodes a fixture and checks it against expected.json's reference hash.
    private func expectReference(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> DecodedImage {
        let entry = try #require(DecoderFixtures.expected[name], "\(name) missing from expected.json", sourceLocation: sourceLocation)
        let image = try ImageCodersManager.shared.decode(try DecoderFixtures.data(name))
        #expect(image.width == entry.width && image.height == entry.height, "\(name)", sourceLocation: sourceLocation)
        #expect(!image.isIncomplete, "\(name)", sourceLocation: sourceLocation)
        #expect(SHA256.hex(image.pixels) == entry.sha256_rgba, "\(name): differs from the \(entry.reference) reference",
                sourceLocation: sourceLocation)
        return image
    }

    @Test(.requires(.libtiff))
    func smallUncompressedTilesDecode() throws {
        // Was "Invalid tile byte count for tile 0. Expected 768, got 1024": libtiff's unmapped reader.
        _ = try expectReference("tiled_rgb8.tif")
        _ = try expectReference("tiled_gray1.tif")
    }

    @Test(.requires(.libtiff))
    func bigTIFFIsSniffedAndDecoded() throws {
        let data = try DecoderFixtures.data("bigtiff_rgb8.tif")
        #expect(ImageFormat(sniffing: data) == .tiff)
        #expect(ImageFormat(sniffing: Data([0x4D, 0x4D, 0x00, 0x2B, 0, 8, 0, 0])) == .tiff)
        #expect(try expectReference("bigtiff_rgb8.tif").format == .tiff)
    }

    @Test(.requires(.libtiff))
    func unspecifiedExtraSampleIsOpaque() throws {
        // Every extra sample is 1: read as alpha the image was nearly invisible.
        let image = try expectReference("rgb_unspecified_extra.tif")
        #expect(stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 255 })
    }

    @Test(.requires(.libtiff))
    func sixteenBitSamplesKeepTheirHighByteAndStraightAlpha() throws {
        // Planar RGBA16 with unassociated alpha, and tiled gray16 + alpha: libtiff's RGBA interface rounded
        // to 8 bits and premultiplied (one off after un-premultiplying); Pillow and PNG keep the high byte.
        _ = try expectReference("planar_rgba16.tif")
        _ = try expectReference("tiled_gray16_alpha.tif")
    }

    @Test func cursorFilesAreRecognised() throws {
        let data = try DecoderFixtures.data("cursor.cur")
        #expect(ImageFormat(sniffing: data) == .ico)
        #expect(ImageFormat(sniffing: Data([0, 0, 2, 0, 0, 0])) == .undefined)  // no entries
        #expect(try expectReference("cursor.cur").format == .ico)
    }

    @Test(.requires(.libheif))
    func avifSequenceDecodesItsPrimaryImage() throws {
        // ftyp "avis" with only avis/msf1/miaf/MA1B brands: libheif 1.15 called it an unsupported file type,
        // reported as "no avif decoder in this build" although libheif was there.
        let data = try DecoderFixtures.data("star-8bpc.avifs")
        #expect(ImageFormat(sniffing: data) == .avif)
        let image = try ImageCodersManager.shared.decode(data)
        let reference = try PNGCoder().decode(try DecoderFixtures.data("star-8bpc.pillow.png"), options: ImageDecodingOptions())
        #expect(image.width == 159 && image.height == 159)
        // libheif and libavif (Pillow) convert YUV to RGB slightly differently.
        #expect(PixelComparison.meanAbsoluteError(image.pixels, reference.pixels) <= 1)
    }

    @Test(.requires(.libheif))
    func anAVIFSequenceLibheifCannotOpenIsNotBlamedOnAMissingLibrary() throws {
        // The same sequence with its meta box's primary item removed: nothing still to decode for libheif (the
        // AVIF coder, through libavif, decodes the sequence itself: AVIFConformanceTests).
        var bytes = [UInt8](try DecoderFixtures.data("star-8bpc.avifs"))
        let meta = try #require(Self.find(Array("meta".utf8), in: bytes))
        bytes.replaceSubrange(meta..<meta + 4, with: Array("free".utf8))
        do {
            _ = try HEIFCoder().decode(Data(bytes), options: ImageDecodingOptions())
            Issue.record("decoded a sequence without a primary image")
        } catch let error as ImageDecodingError {
            guard case .corrupt(let why) = error else { Issue.record("expected .corrupt naming libheif, got \(error)"); return }
            #expect(why.contains("libheif") && why.contains("sequence"))
        }
    }

    @Test(.requires(.libtiff, .libheif), arguments: [
        "tiled_rgb8.tif", "tiled_gray1.tif", "bigtiff_rgb8.tif", "rgb_unspecified_extra.tif", "planar_rgba16.tif",
        "tiled_gray16_alpha.tif", "cursor.cur", "star-8bpc.avifs",
    ])
    func chunkedEqualsOneShot(_ name: String) throws {
        let data = try DecoderFixtures.data(name)
        let oneShot = try ImageCodersManager.shared.decode(data)
        for round in 0..<3 {
            let chunked = try IncrementalConformanceTests.decodeInChunks(data, seed: stableSeed(name) &+ UInt64(round)).get()
            #expect(chunked.pixels == oneShot.pixels && chunked.width == oneShot.width, "\(name) round \(round)")
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }
}

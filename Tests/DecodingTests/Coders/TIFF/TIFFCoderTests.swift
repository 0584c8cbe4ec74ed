import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// TIFF through libtiff (dlopen): corpus hashes, orientation reporting, hostile input, and the behaviour
/// without the library.
@Suite(.serialized, .offThePool) struct TIFFCoderTests {
    let coder = TIFFCoder()

    @Test(.requires(.corpus, .libtiff))
    func everyCorpusTIFFMatchesItsReferenceOnceOriented() throws {
        let files = Corpus.files(format: "tiff")
        #expect(files.count >= 2)
        for path in files {
            let entry = try #require(Corpus.expected[path])
            let image = try coder.decode(try Corpus.data(path), options: ImageDecodingOptions())
            #expect(image.format == .tiff)
            #expect(!image.isIncomplete)
            // Pillow transposes TIFFs by their Orientation tag while loading; the coder reports it instead.
            let shown = Self.applying(image.orientation, to: image)
            #expect(shown.width == entry.width && shown.height == entry.height, "\(path)")
            #expect(SHA256.hex(shown.pixels) == entry.sha256_rgba, "\(path)")
        }
    }

    @Test(.requires(.corpus, .libtiff))
    func orientationTagIsReportedNotApplied() throws {
        let image = try coder.decode(try Corpus.data("pillow/g4_orientation_6.tif"), options: ImageDecodingOptions())
        #expect(image.orientation == .right)
        #expect(image.width == 88 && image.height == 590)  // stored size: ImageWidth 88, ImageLength 590
        let plain = try coder.decode(try Corpus.data("pillow/hopper.tif"), options: ImageDecodingOptions())
        #expect(plain.orientation == .up)
    }

    @Test(.requires(.corpus, .libtiff))
    func damagedFilesGiveTypedErrorsOrPartialImages() throws {
        let original = try Corpus.data("pillow/hopper.tif")
        // hopper.tif keeps its directory after the pixels: any cut loses it.
        for length in stride(from: 0, to: original.count, by: 1531) {
            #expect(throws: ImageDecodingError.truncated) { try coder.decode(original.prefix(length), options: ImageDecodingOptions()) }
        }
        var rng = SeededRandom(seed: 5)
        for path in ["pillow/hopper.tif", "pillow/g4_orientation_6.tif"] {
            // The 4-byte header (byte order, 42) stays intact: every copy is still a TIFF.
            expectBitFlippedCopiesDecodeOrThrowTyped(try Corpus.data(path), with: coder, copies: 60, bitsPerCopy: 3,
                                                     keepingFirst: 4, using: &rng, path)
        }
    }

    @Test(.requires(.libtiff))
    func truncatedStripsGiveAPartialImage() throws {
        // 16x16 8-bit gray, directory first, one strip per row: cutting the file keeps the first rows.
        let w = 16, h = 16
        let ifdEntries = 9, ifdSize = 2 + ifdEntries * 12 + 4
        let offsetsAt = 8 + ifdSize, countsAt = offsetsAt + 4 * h, dataAt = countsAt + 4 * h
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: Int) -> [UInt8] { le16(tag) + le16(type) + le32(count) + le32(value) }
        var file: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(ifdEntries)
        file += entry(256, 3, 1, w) + entry(257, 3, 1, h) + entry(258, 3, 1, 8) + entry(259, 3, 1, 1) + entry(262, 3, 1, 1)
        file += entry(273, 4, h, offsetsAt) + entry(277, 3, 1, 1) + entry(278, 3, 1, 1) + entry(279, 4, h, countsAt) + le32(0)
        for row in 0..<h { file += le32(dataAt + row * w) }
        for _ in 0..<h { file += le32(w) }
        for row in 0..<h { file += (0..<w).map { UInt8(row * 16 + $0) } }

        let whole = try coder.decode(Data(file), options: ImageDecodingOptions())
        #expect(!whole.isIncomplete)
        #expect(whole.pixels[(5 * w + 3) * 4] == 5 * 16 + 3)

        let cut = try coder.decode(Data(file.prefix(dataAt + 8 * w)), options: ImageDecodingOptions())
        #expect(cut.isIncomplete)
        #expect(cut.width == w && cut.height == h)
        for x in 0..<w { #expect(Array(cut.pixels[(7 * w + x) * 4..<(7 * w + x) * 4 + 4]) == [UInt8(112 + x), UInt8(112 + x), UInt8(112 + x), 255]) }

        #expect(throws: ImageDecodingError.truncated) { try coder.decode(Data(file.prefix(dataAt)), options: ImageDecodingOptions()) }
    }

    @Test(.requires(.libtiff))
    func hugeDimensionsAreRejectedBeforeAllocating() throws {
        // Little-endian TIFF, one IFD: 100000 x 100000, 8-bit gray, one strip of 1 byte.
        var ifd: [UInt8] = le16(8)
        func entry(_ tag: Int, _ type: Int, _ value: Int) -> [UInt8] { le16(tag) + le16(type) + le32(1) + le32(value) }
        ifd += entry(256, 4, 100_000) + entry(257, 4, 100_000) + entry(258, 3, 8) + entry(259, 3, 1)
        ifd += entry(262, 3, 1) + entry(273, 4, 8 + 2 + 8 * 12 + 4) + entry(278, 4, 100_000) + entry(279, 4, 1)
        let file = Data([0x49, 0x49, 0x2A, 0x00] + le32(8) + ifd + le32(0) + [0])
        #expect(throws: ImageDecodingError.tooLarge(width: 100_000, height: 100_000)) {
            try coder.decode(file, options: ImageDecodingOptions())
        }
    }

    @Test(.requires(.corpus, .libtiff))
    func builtInManagerDecodesIt() throws {
        #expect(ImageCodersManager().coders.contains { $0 is TIFFCoder })
        let image = try ImageCodersManager().decode(try Corpus.data("pillow/hopper.tif"))
        #expect(image.format == .tiff)
        #expect(image.width == 128 && image.height == 128)
    }

    @Test func missingLibraryGivesUnsupportedFormat() throws {
        let missing = TIFFCoder(soname: "libtiff-not-installed.so.99")
        #expect(missing.unavailableReason?.contains("libtiff-not-installed.so.99") == true)
        let header = Data([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0, 0, 0])
        #expect(missing.canDecode(header))
        #expect(throws: ImageDecodingError.unsupportedFormat) { try missing.decode(header, options: ImageDecodingOptions()) }
    }

    /// The image as displayed: EXIF/TIFF orientation applied (rotation and mirroring).
    static func applying(_ orientation: ImageOrientation, to image: DecodedImage) -> DecodedImage {
        let w = image.width, h = image.height
        let swaps = orientation.swapsDimensions
        let outW = swaps ? h : w, outH = swaps ? w : h
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        for y in 0..<outH {
            for x in 0..<outW {
                let (sx, sy): (Int, Int)
                switch orientation {
                case .up: (sx, sy) = (x, y)
                case .upMirrored: (sx, sy) = (w - 1 - x, y)
                case .down: (sx, sy) = (w - 1 - x, h - 1 - y)
                case .downMirrored: (sx, sy) = (x, h - 1 - y)
                case .leftMirrored: (sx, sy) = (y, x)
                case .right: (sx, sy) = (y, h - 1 - x)
                case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                case .left: (sx, sy) = (w - 1 - y, x)
                }
                for c in 0..<4 { out[(y * outW + x) * 4 + c] = image.pixels[(sy * w + sx) * 4 + c] }
            }
        }
        return DecodedImage(width: outW, height: outH, pixels: out, format: image.format)
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    private func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }
}

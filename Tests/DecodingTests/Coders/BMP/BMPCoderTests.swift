import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// BMP against the corpus, plus synthetic files for the layouts the corpus lacks.
@Suite(.serialized, .offThePool) struct BMPCoderTests {
    static func decode(_ bytes: [UInt8], _ options: ImageDecodingOptions = .init()) throws -> DecodedImage {
        try BMPCoder().decode(Data(bytes), options: options)
    }

    @Test(.requires(.corpus))
    func everyCorpusBMPGetsItsDocumentedOutcome() throws {
        let files = Corpus.files(format: "bmp")
        #expect(files.count == 14)
        var matched = 0
        for file in files {
            guard let entry = Corpus.expected[file] else { continue }
            let data = try Corpus.data(file)
            if entry.expected == "error" && CorpusConformanceTests.documentedDifferences[file] == nil {
                #expect(throws: ImageDecodingError.self, "\(file)") { try BMPCoder().decode(data, options: .init()) }
                continue
            }
            let image = try BMPCoder().decode(data, options: .init())
            if entry.expected == "error" { continue }  // a documented difference: bitfieldMasksOfAnyWidthDecode
            #expect(image.width == entry.width && image.height == entry.height, "\(file)")
            #expect(!image.isIncomplete && image.format == .bmp)
            #expect(SHA256.hex(image.pixels) == entry.sha256_rgba, "\(file)")
            if SHA256.hex(image.pixels) == entry.sha256_rgba { matched += 1 }
        }
        #expect(matched == 11)
    }

    /// The corpus's invalid files, with the reason each one is refused.
    @Test(.requires(.corpus))
    func corpusErrorsAreTyped() throws {
        #expect(throws: ImageDecodingError.corrupt("BMP bit depth 30000 is unsupported")) {
            try BMPCoder().decode(try Corpus.data("pillow/b_badbitcount.bmp"), options: .init())
        }
        #expect(throws: ImageDecodingError.corrupt("BMP width is negative")) {
            try BMPCoder().decode(try Corpus.data("pillow/b_badwidth.bmp"), options: .init())
        }
    }

    @Test(.requires(.corpus))
    func bitfieldMasksOfAnyWidthDecode() throws {
        // bmpsuite calls rgb32bf.bmp valid (masks 0xFF000000, 0x00000FF0, 0x00FF0000) and browsers show it; Pillow
        // refuses masks that are not whole bytes. It is bmpsuite's picture, as rgb24.bmp holds it.
        let masked = try BMPCoder().decode(try Corpus.data("pillow/g_rgb32bf.bmp"), options: .init())
        let plain = try BMPCoder().decode(try Corpus.data("pillow/g_rgb24.bmp"), options: .init())
        #expect(masked.width == plain.width && masked.pixels == plain.pixels)
    }

    @Test func wideMasksKeepTheirTopBitsAndNarrowOnesScale() throws {
        // 32-bit 10-10-10-2 (a2r10g10b10) and 16-bit 3-10-3: fields wider than 8 bits keep their top 8 bits.
        let a2r10g10b10: UInt32 = 0b11 << 30 | 0x3FF << 20 | 0x200 << 10 | 0x0FF
        let wide = BMPBuilder.file(width: 1, height: 1, bits: 32, rows: [le32(a2r10g10b10)], compression: 6,
                                   masks: [0x3FF0_0000, 0x000F_FC00, 0x0000_03FF, 0xC000_0000])
        #expect(try Self.decode(wide).pixels == [255, 128, 63, 255])
        let r3g10b3: UInt16 = 0b101 << 13 | 0x3FF << 3 | 0b011
        let narrow = BMPBuilder.file(width: 1, height: 1, bits: 16, rows: [le16(r3g10b3) + [0, 0]], compression: 3,
                                     masks: [0xE000, 0x1FF8, 0x0007])
        #expect(try Self.decode(narrow).pixels == [182, 255, 109, 255])  // 5 * 255 / 7, top 8 of 0x3FF, 3 * 255 / 7
    }

    private func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }

    @Test func sixteenBitDefaultsTo555() throws {
        // 2x1, BI_RGB 16-bit: pure red and pure blue in x1r5g5b5.
        let bmp = BMPBuilder.file(width: 2, height: 1, bits: 16, rows: [[0x00, 0x7C, 0x1F, 0x00]])
        #expect(try Self.decode(bmp).pixels == [255, 0, 0, 255, 0, 0, 255, 255])
    }

    @Test func thirtyTwoBitRGBIsOpaqueAndBitfieldsCarryAlpha() throws {
        let pixel: [UInt8] = [10, 20, 30, 40]  // B, G, R, X/A
        let plain = BMPBuilder.file(width: 1, height: 1, bits: 32, rows: [pixel])
        #expect(try Self.decode(plain).pixels == [30, 20, 10, 255])
        let masked = BMPBuilder.file(width: 1, height: 1, bits: 32, rows: [pixel], compression: 6,
                                     masks: [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000])
        #expect(try Self.decode(masked).pixels == [30, 20, 10, 40])
    }

    @Test func coreHeaderTopDownAndRowPadding() throws {
        // BITMAPCOREHEADER, 24-bit, 1x2 (rows padded to 4 bytes), bottom-up: the last stored row is the top.
        var core: [UInt8] = Array("BM".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 26, 0, 0, 0]
        core += [12, 0, 0, 0, 1, 0, 2, 0, 1, 0, 24, 0]
        core += [255, 0, 0, 0, 0, 0, 255, 0]  // bottom row blue, top row red
        #expect(try Self.decode(core).pixels == [255, 0, 0, 255, 0, 0, 255, 255])
        let topDown = BMPBuilder.file(width: 1, height: -2, bits: 24, rows: [[255, 0, 0, 0], [0, 0, 255, 0]])
        #expect(try Self.decode(topDown).pixels == [0, 0, 255, 255, 255, 0, 0, 255])
    }

    @Test func rle4WithDeltaAndEndOfLine() throws {
        // 4x2, palette [black, white, red]; bottom row: run of 2 alternating white/red, delta +1; top row: absolute 3 pixels.
        let rle: [UInt8] = [2, 0x12, 0, 2, 1, 0, 0, 0, 0, 3, 0x21, 0x10, 0, 1]
        let bmp = BMPBuilder.file(width: 4, height: 2, bits: 4, rows: [rle], compression: 2,
                                  palette: [[0, 0, 0], [255, 255, 255], [255, 0, 0]])
        let image = try Self.decode(bmp)
        let black: [UInt8] = [0, 0, 0, 255], white: [UInt8] = [255, 255, 255, 255], red: [UInt8] = [255, 0, 0, 255]
        // Unwritten pixels keep index 0, as in Pillow.
        #expect(image.pixels == red + white + white + black + white + red + black + black)
        #expect(!image.isIncomplete)
    }

    @Test func truncatedFilesKeepTheRowsThatArrived() throws {
        // 4x4 24-bit, bottom-up, stored rows of gray 10, 70, 130, 190 (12 bytes each, no padding needed).
        let rows = (0..<4).map { y in [UInt8](repeating: UInt8(10 + y * 60), count: 12) }
        let bmp = BMPBuilder.file(width: 4, height: 4, bits: 24, rows: rows)
        let cut = try Self.decode(Array(bmp.dropLast(12 + 5)))  // two whole stored rows and a piece of the third
        #expect(cut.isIncomplete)
        func gray(_ v: UInt8) -> [UInt8] { Array([[UInt8]](repeating: [v, v, v, 255], count: 4).joined()) }
        #expect(Array(cut.pixels.suffix(32)) == gray(70) + gray(10), "the bottom rows arrived first")
        #expect(cut.pixels.prefix(32).allSatisfy { $0 == 0 }, "missing rows are transparent")
        #expect(throws: ImageDecodingError.truncated) { try Self.decode(Array(bmp.prefix(54 + 5))) }
        #expect(throws: ImageDecodingError.truncated) { try Self.decode(Array(bmp.prefix(20))) }
    }

    @Test func headerLimitsComeBeforeAllocation() throws {
        let huge = BMPBuilder.file(width: 60_000, height: 60_000, bits: 24, rows: [])
        #expect(throws: ImageDecodingError.tooLarge(width: 60_000, height: 60_000)) { try Self.decode(huge) }
        #expect(throws: ImageDecodingError.zeroPixels) { try Self.decode(BMPBuilder.file(width: 0, height: 5, bits: 24, rows: [])) }
        let small = ImageDecodingOptions(maximumPixelCount: 10)
        #expect(throws: ImageDecodingError.tooLarge(width: 4, height: 4)) {
            try Self.decode(BMPBuilder.file(width: 4, height: 4, bits: 24, rows: []), small)
        }
    }

    @Test func managerDecodesBMPThroughItsRegistry() throws {
        let bmp = BMPBuilder.file(width: 1, height: 1, bits: 24, rows: [[1, 2, 3, 0]])
        let image = try ImageCodersManager.shared.decode(Data(bmp))
        #expect(image.format == .bmp && image.pixels == [3, 2, 1, 255])
    }
}

/// Writes BMP files with a 40-byte BITMAPINFOHEADER (plus masks for compression 3 and 6).
enum BMPBuilder {
    static func file(width: Int, height: Int, bits: Int, rows: [[UInt8]], compression: Int = 0,
                     masks: [UInt32] = [], palette: [[UInt8]] = []) -> [UInt8] {
        func u32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        let pixelOffset = 14 + 40 + masks.count * 4 + palette.count * 4
        var out: [UInt8] = Array("BM".utf8) + u32(0) + u32(0) + u32(pixelOffset)
        out += u32(40) + u32(width) + u32(height) + u16(1) + u16(bits) + u32(compression)
        out += u32(0) + u32(2835) + u32(2835) + u32(palette.count) + u32(0)
        for mask in masks { out += u32(Int(mask)) }
        for colour in palette { out += [colour[2], colour[1], colour[0], 0] }
        for row in rows { out += row }
        return out
    }
}

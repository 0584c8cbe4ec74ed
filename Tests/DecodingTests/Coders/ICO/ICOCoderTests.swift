import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// ICO: entry choice, DIB entries with their AND mask, PNG entries through the registered PNG coder.
@Suite(.serialized, .offThePool) struct ICOCoderTests {
    struct Entry {
        var width: Int, height: Int, bits: Int, payload: [UInt8]
    }

    /// An ICO directory followed by the payloads in order.
    static func ico(_ entries: [Entry]) -> Data {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xFFFF) + u16(v >> 16) }
        var out: [UInt8] = [0, 0, 1, 0] + u16(entries.count)
        var offset = 6 + 16 * entries.count
        for e in entries {
            out += [UInt8(e.width & 0xFF), UInt8(e.height & 0xFF), 0, 0] + u16(1) + u16(e.bits)
            out += u32(e.payload.count) + u32(offset)
            offset += e.payload.count
        }
        for e in entries { out += e.payload }
        return Data(out)
    }

    /// A DIB as stored in icons: BITMAPINFOHEADER with doubled height, colour rows, then the AND mask rows.
    static func dib(width: Int, height: Int, bits: Int, rows: [[UInt8]], mask: [[UInt8]]) -> [UInt8] {
        func u32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        var out = u32(40) + u32(width) + u32(height * 2) + [1, 0, UInt8(bits), 0] + u32(0) + u32(0)
        out += u32(0) + u32(0) + u32(0) + u32(0)
        for row in rows { out += row }
        for row in mask { out += row }
        return out
    }

    static func decode(_ data: Data) throws -> DecodedImage { try ICOCoder().decode(data, options: .init()) }

    @Test(.requires(.corpus))
    func corpusBombIsRejectedByTheDIBHeader() throws {
        // Entry header claims 65535 x (65535 / 2): refused before any pixel memory.
        #expect(Corpus.files(format: "ico") == ["pillow/decompression_bomb.ico"])
        #expect(throws: ImageDecodingError.tooLarge(width: 65535, height: 32767)) {
            try Self.decode(try Corpus.data("pillow/decompression_bomb.ico"))
        }
    }

    @Test func picksTheLargestThenDeepestEntryAndUsesItsAlpha() throws {
        let small = Self.dib(width: 1, height: 1, bits: 24, rows: [[9, 9, 9, 0]], mask: [[0, 0, 0, 0]])
        // 2x2, 32-bit BGRA, bottom-up: bottom row half-transparent blue and red, top row green and white.
        let big32 = Self.dib(width: 2, height: 2, bits: 32,
                             rows: [[255, 0, 0, 128, 0, 0, 255, 128], [0, 255, 0, 255, 255, 255, 255, 255]],
                             mask: [[0, 0, 0, 0], [0, 0, 0, 0]])
        let big24 = Self.dib(width: 2, height: 2, bits: 24, rows: [[1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 0, 0]],
                             mask: [[0, 0, 0, 0], [0, 0, 0, 0]])
        let data = Self.ico([Entry(width: 1, height: 1, bits: 24, payload: small),
                             Entry(width: 2, height: 2, bits: 24, payload: big24),
                             Entry(width: 2, height: 2, bits: 32, payload: big32)])
        let image = try Self.decode(data)
        #expect(image.width == 2 && image.height == 2 && image.format == .ico)
        #expect(image.pixels == [0, 255, 0, 255, 255, 255, 255, 255, 0, 0, 255, 128, 255, 0, 0, 128])
    }

    @Test func andMaskGivesAlphaToDIBsWithoutIt() throws {
        // 2x1 24-bit red and blue; AND mask bit 1 (the first pixel) means transparent.
        let dib24 = Self.dib(width: 2, height: 1, bits: 24, rows: [[0, 0, 255, 255, 0, 0, 0, 0]], mask: [[0x80, 0, 0, 0]])
        let image = try Self.decode(Self.ico([Entry(width: 2, height: 1, bits: 24, payload: dib24)]))
        #expect(image.pixels == [255, 0, 0, 0, 0, 0, 255, 255])
        // 32-bit whose alpha bytes are all zero: an old-style icon, the mask decides.
        let dib32 = Self.dib(width: 2, height: 1, bits: 32, rows: [[0, 0, 255, 0, 255, 0, 0, 0]], mask: [[0x40, 0, 0, 0]])
        let old = try Self.decode(Self.ico([Entry(width: 2, height: 1, bits: 32, payload: dib32)]))
        #expect(old.pixels == [255, 0, 0, 255, 0, 0, 255, 0])
    }

    @Test func iconInsideAnIconIsRefused() throws {
        let inner = Self.ico([Entry(width: 1, height: 1, bits: 24,
                                    payload: Self.dib(width: 1, height: 1, bits: 24, rows: [[0, 0, 0, 0]], mask: [[0, 0, 0, 0]]))])
        let outer = Self.ico([Entry(width: 1, height: 1, bits: 32, payload: [UInt8](inner))])
        #expect(throws: ImageDecodingError.corrupt("ICO entry is itself an ICO file")) { try Self.decode(outer) }
    }

    @Test func brokenDirectoriesAreTyped() throws {
        #expect(throws: ImageDecodingError.truncated) { try Self.decode(Data([0, 0, 1, 0])) }
        #expect(throws: ImageDecodingError.corrupt("ICO directory has no entries")) { try Self.decode(Data([0, 0, 1, 0, 0, 0])) }
        let pastTheEnd = Self.ico([Entry(width: 1, height: 1, bits: 24, payload: [])])
        #expect(throws: ImageDecodingError.self) { try Self.decode(pastTheEnd) }
    }

    @Test(.requires(.corpus))
    func pngEntriesGoThroughThePNGCoder() throws {
        let png = try Corpus.data("pngsuite/basn6a08.png")
        let data = Self.ico([Entry(width: 32, height: 32, bits: 32, payload: [UInt8](png))])
        let image = try Self.decode(data)
        // Coder level: pixels as decoded (basn6a08 has gAMA 1.0); through the manager: both colour-managed alike.
        let direct = try PNGCoder().decode(png, options: ImageDecodingOptions())
        #expect(image.format == .ico && image.width == 32 && image.pixels == direct.pixels)
        #expect(try ImageCodersManager.shared.decode(data).pixels == ImageCodersManager.shared.decode(png).pixels)
    }
}

import Foundation
import TestRequirements
import Testing
@testable import Decoding

/// The behaviours behind some of the format variants (issue 20), asserted pixel by pixel rather than by hash:
/// PNG tRNS keys, cursor AND masks, 2-bit BMP.
@Suite(.offThePool) struct FormatVariantDetailTests {
    private func pixels(_ name: String) throws -> [[UInt8]] {
        let image = try FormatVariantTests.decode(name)
        return stride(from: 0, to: image.pixels.count, by: 4).map { Array(image.pixels[$0..<$0 + 4]) }
    }

    @Test(arguments: [("png-gray1-trns.png", UInt8(255)), ("png-gray2-trns.png", 170), ("png-gray4-trns.png", 85)])
    func lowBitGrayKeysCompareWithTheUnscaledSample(_ name: String, keyShownAs gray: UInt8) throws {
        // tRNS holds the key at the image's own depth (1, 2 or 5 for 1/2/4 bits): exactly the pixels whose sample
        // equals it are transparent. Pillow compares it with the 8-bit-scaled sample and finds none.
        let all = try pixels(name)
        #expect(all.contains { $0[3] == 0 })
        for pixel in all { #expect((pixel[0] == gray) == (pixel[3] == 0), "\(name): \(pixel)") }
    }

    @Test func sixteenBitKeysMatchExactly() throws {
        // Pixels with (x + y) % 5 == 0 hold the key, == 1 the key + 1: same high byte, different sample.
        for name in ["png-gray16-trns.png", "png-rgb16-trns.png"] {
            let image = try FormatVariantTests.decode(name)
            #expect(FormatVariantTests.pixel(image, 0, 0)[3] == 0, "\(name): the key is transparent")
            let nearKey = FormatVariantTests.pixel(image, 1, 0)
            #expect(nearKey[3] == 255 && nearKey[0] == 0x12, "\(name): key + 1 is opaque, \(nearKey)")
        }
    }

    @Test func oneBitCursorMaskIsTransparentBlackAndIconsKeepTheColour() throws {
        // (1, 0) lies outside the circle the AND mask leaves visible; its XOR index is 1 (white).
        let cursor = try FormatVariantTests.decode("cur-dib1-andmask.cur")
        let icon = try FormatVariantTests.decode("ico-dib1-andmask.ico")
        #expect(FormatVariantTests.pixel(cursor, 1, 0) == [0, 0, 0, 0])
        #expect(FormatVariantTests.pixel(icon, 1, 0) == [255, 255, 255, 0])
        #expect(FormatVariantTests.pixel(cursor, 9, 6)[3] == 255 && FormatVariantTests.pixel(icon, 9, 6)[3] == 255)
    }

    @Test func thirtyTwoBitCursorsKeepTheirAlphaChannel() throws {
        let cursor = try FormatVariantTests.decode("cur-dib32-andmask.cur")
        // alpha_pattern: 0 where (x + y) % 7 == 0, else (13x + 29y) % 256.
        #expect(FormatVariantTests.pixel(cursor, 0, 0)[3] == 0)
        #expect(FormatVariantTests.pixel(cursor, 2, 1)[3] == 55)
    }

    @Test func twoBitBMPUsesItsFourPaletteEntries() throws {
        let colours = Set(try pixels("bmp-2bit.bmp"))
        #expect(colours.count == 4)
        #expect(colours.allSatisfy { $0[3] == 255 })
    }
}

import Foundation
import TestRequirements
import Testing
@testable import Decoding

@Suite(.serialized, .offThePool) struct FormatSniffingTests {
    @Test func recognisesSignatures() {
        let cases: [([UInt8], ImageFormat)] = [
            ([0xFF, 0xD8, 0xFF, 0xE0], .jpeg),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13], .png),
            (Array("GIF89a".utf8) + [1, 0], .gif),
            (Array("GIF87a".utf8), .gif),
            (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
            ([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], .tiff),
            ([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8], .tiff),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8), .heic),
            ([0, 0, 0, 0x1C] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("avifmif1miaf".utf8), .avif),
            ([0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1miaf".utf8), .heif),
            ([0, 0, 1, 0, 1, 0, 16, 16], .ico),
            (Array("BM".utf8) + [0x36, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0], .bmp),
        ]
        for (bytes, format) in cases {
            #expect(ImageFormat(sniffing: Data(bytes)) == format, "\(bytes.prefix(12))")
        }
    }

    @Test func rejectsNonImages() {
        #expect(ImageFormat(sniffing: Data()) == .undefined)
        #expect(ImageFormat(sniffing: Data("<html><body>not found</body></html>".utf8)) == .undefined)
        #expect(ImageFormat(sniffing: Data("BM but not a bitmap at all".utf8)) == .undefined)
        #expect(ImageFormat(sniffing: Data([0xFF, 0xD8])) == .undefined)
        #expect(ImageFormat(sniffing: Data([0, 0, 0, 0x0C] + Array("ftypjxl ".utf8) + [0, 0, 0, 0])) == .undefined)
    }
}

@Suite(.serialized, .offThePool) struct ScaleFactorTests {
    @Test(arguments: [
        ("icon@2x.png", 2.0), ("icon@3x.jpg", 3.0), ("icon.png", 1.0), ("icon@2x", 2.0),
        ("https://example.com/a/b/icon@3x.png?v=2", 3.0), ("https://example.com/icon@2x", 2.0),
        ("https://example.com/icon.png?name=x@2x.png", 1.0), ("icon@2x~ipad.png", 2.0),
        ("https://example.com/@2x/icon.png", 1.0), ("", 1.0),
    ])
    func scaleFromKey(key: String, expected: Double) {
        #expect(imageScaleFactor(forKey: key) == expected)
    }
}

@Suite(.serialized, .offThePool) struct EXIFOrientationTests {
    func tiff(littleEndian: Bool, orientation: UInt16) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: UInt32) -> [UInt8] { littleEndian ? u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) : u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) }
        let header: [UInt8] = (littleEndian ? Array("II".utf8) : Array("MM".utf8)) + u16(42) + u32(8)
        let entry = u16(0x0112) + u16(3) + u32(1) + u16(orientation) + u16(0)
        return header + u16(1) + entry + u32(0)
    }

    @Test func readsBothByteOrders() {
        for value in 1...8 {
            #expect(EXIFOrientation.parse(tiff(littleEndian: true, orientation: UInt16(value)))?.rawValue == value)
            #expect(EXIFOrientation.parse(Array("Exif".utf8) + [0, 0] + tiff(littleEndian: false, orientation: UInt16(value)))?.rawValue == value)
        }
    }

    @Test func survivesGarbage() {
        #expect(EXIFOrientation.parse([UInt8]()) == nil)
        #expect(EXIFOrientation.parse(tiff(littleEndian: true, orientation: 9)) == nil)
        var broken = tiff(littleEndian: true, orientation: 6)
        broken[4] = 0xFF  // IFD offset far past the end
        #expect(EXIFOrientation.parse(broken) == nil)
        for cut in 0..<broken.count { _ = EXIFOrientation.parse(tiff(littleEndian: false, orientation: 3).prefix(cut)) }
    }
}

@Suite(.serialized, .offThePool) struct ScalerTests {
    @Test func thumbnailKeepsAspectAndNeverEnlarges() {
        let fit = ImageScaler.targetSize(width: 4000, height: 3000, options: .init(thumbnailPixelSize: CGSize(width: 400, height: 400)))
        #expect(fit?.width == 400 && fit?.height == 300)
        #expect(ImageScaler.targetSize(width: 100, height: 50, options: .init(thumbnailPixelSize: CGSize(width: 400, height: 400))) == nil)
        let limited = ImageScaler.targetSize(width: 4000, height: 4000, options: .init(scaleDownLimitBytes: 4 * 1_000_000))
        #expect(limited.map { $0.width * $0.height * 4 <= 4_000_000 } == true)
        #expect(limited?.width == limited?.height)
    }

    @Test func areaFilterAveragesAndRespectsAlpha() {
        // 2x2: opaque red, transparent green (must not bleed), opaque red, opaque blue.
        let px: [UInt8] = [255, 0, 0, 255, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 255]
        let image = DecodedImage(width: 2, height: 2, pixels: px, format: .png)
        let one = ImageScaler.resize(image, width: 1, height: 1)
        #expect(one.pixels == [170, 0, 85, 191])
        let flat = DecodedImage(width: 6, height: 3, pixels: [UInt8](repeating: 77, count: 72), format: .png)
        #expect(ImageScaler.resize(flat, width: 4, height: 2).pixels == [UInt8](repeating: 77, count: 32))
    }
}

@Suite(.serialized, .offThePool) struct SHA256Tests {
    /// FIPS 180-4 test vectors, including lengths around the 55/56/64-byte padding boundaries.
    @Test func knownVectors() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

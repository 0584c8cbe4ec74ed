import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// The DC-only shrink-on-load path: the same pixels as libjpeg's 1/8 scaling on the whole corpus (restart
/// markers and every sampling included), and a fallback to libjpeg for everything else and for damaged data.
@Suite(.serialized, .offThePool) struct JPEGDCThumbnailTests {
    /// Options that ask for at most 1/8 of a `w`×`h` image with shrink-on-load.
    static func eighth(_ w: Int, _ h: Int) -> ImageDecodingOptions {
        ImageDecodingOptions(thumbnailPixelSize: CGSize(width: (w + 7) / 8, height: (h + 7) / 8), shrinkOnLoad: .fit)
    }

    /// libjpeg's own decode of the same file at `scale_denom = 8`.
    static func libjpegEighth(_ data: Data, _ w: Int, _ h: Int) throws -> DecodedImage {
        let jpeg = try JPEGDecompressor(maximumPixelCount: ImageDecodingOptions.defaultMaximumPixelCount)
        return try data.withUnsafeBytes { bytes in
            jpeg.setBorrowedInput(bytes)
            let header = try #require(try jpeg.readHeader())
            let size = try jpeg.configure(scaleDenominator: 8)
            try jpeg.start()
            var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
            _ = try pixels.withUnsafeMutableBufferPointer { try jpeg.decode(into: try #require($0.baseAddress)) }
            return DecodedImage(width: size.width, height: size.height, pixels: pixels, format: .jpeg, orientation: header.orientation)
        }
    }

    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        var se = 0.0, n = 0.0
        for i in a.indices where i % 4 != 3 { let d = Double(a[i]) - Double(b[i]); se += d * d; n += 1 }
        return se == 0 ? .infinity : 10 * log10(255 * 255 / (se / n))
    }

    @Test("every plain corpus JPEG: DC path (pixel-identical to libjpeg's 1/8) or libjpeg fallback",
          .requires(.corpus))
    func corpus() throws {
        var fast = 0
        for path in Corpus.files(format: "jpeg") {
            guard let entry = Corpus.expected[path], entry.expected.hasPrefix("decode"),
                  let w = entry.width, let h = entry.height, w >= 16, h >= 16 else { continue }
            let data = try Corpus.data(path)
            let reference = try Self.libjpegEighth(data, w, h)
            let options = Self.eighth(w, h)
            let viaDCWithProfile = JPEGDCThumbnailDecoder.decodeWithProfile(data, options: options)
            let viaDC = viaDCWithProfile?.image
            let image = try JPEGCoder().decode(data, options: options)
            #expect(image.width == reference.width && image.height == reference.height, "\(path)")
            #expect(image.orientation == reference.orientation, "\(path)")
            if let viaDC {
                fast += 1
                #expect(viaDC.pixels == image.pixels && viaDC.width == image.width && viaDC.height == image.height, "\(path)")
                // The coder hands the embedded profile on, for the manager's colour step.
                #expect(image.iccProfile.map { [UInt8]($0) } == viaDCWithProfile?.iccProfile.flatMap { $0.isEmpty ? nil : $0 }, "\(path)")
            }
            #expect(image.pixels == reference.pixels, "\(path): \(Self.psnr(image.pixels, reference.pixels)) dB")
            if viaDC == nil {
                #expect(image.pixels == reference.pixels, "\(path): the fallback is libjpeg's 1/8")
            }
        }
        #expect(fast >= 15, "the DC path should handle the corpus' plain baseline files (\(fast))")
    }

    @Test("synthetic 4:4:4: pixel-identical to libjpeg's 1/8 scaled IDCT")
    func grayIsExact() throws {
        let gray = TestImages.make(203, 117) { x, y in let v = UInt8((x * 3 + y * 5) % 256); return (v, v, v, 255) }
        // A gray-looking colour JPEG still has chroma; encode 4:4:4 so only luma and flat chroma differ.
        let data = try ImageCodersManager.shared.encode(gray, options: ImageEncodingOptions(format: .jpeg, quality: 0.9, chromaSubsampling: .yuv444))
        let viaDC = try #require(JPEGDCThumbnailDecoder.decode(data, options: Self.eighth(203, 117)))
        let reference = try Self.libjpegEighth(data, 203, 117)
        #expect(viaDC.width == 26 && viaDC.height == 15)
        #expect(viaDC.pixels == reference.pixels)
    }

    @Test("restart markers, 4:2:2 and 4:4:4 files take the DC path", .requires(.corpus),
          arguments: ["generated/photo_420_restart.jpg", "generated/photo_422.jpg", "generated/photo_444.jpg"])
    func samplings(_ path: String) throws {
        let data = try Corpus.data(path)
        let image = try #require(JPEGDCThumbnailDecoder.decode(data, options: Self.eighth(640, 480)), "\(path)")
        let reference = try Self.libjpegEighth(data, 640, 480)
        #expect(image.pixels == reference.pixels, "\(path): \(Self.psnr(image.pixels, reference.pixels)) dB")
    }

    @Test("incremental decoding with shrink-on-load ends in the one-shot (DC path) pixels", .requires(.corpus),
          arguments: ["generated/photo_420_restart.jpg", "generated/photo_444.jpg"])
    func incrementalMatchesOneShot(_ path: String) throws {
        let data = try Corpus.data(path)
        let options = Self.eighth(640, 480)
        let oneShot = try ImageCodersManager.shared.decode(data, options: options)
        let decoder = try #require(ImageCodersManager.shared.incrementalDecoder(for: data, options: options))
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + 4096)
            try decoder.append(data.subdata(in: offset..<end), isFinal: false)
            offset = end
        }
        try decoder.append(Data(), isFinal: true)
        #expect(decoder.currentImage()?.pixels == oneShot.pixels)
    }

    @Test("the embedded ICC profile is handed back for colour management", .requires(.corpus))
    func iccProfile() throws {
        let data = try Corpus.data("sdwebimage/TestJFIF.jpg")
        let result = try #require(JPEGDCThumbnailDecoder.decodeWithProfile(data, options: Self.eighth(4032, 3024)))
        let profile = try #require(result.iccProfile)
        #expect(profile.count == 536 && Array(profile[36..<40]) == Array("acsp".utf8))   // an ICC header
        #expect(JPEGDCThumbnailDecoder.decodeWithProfile(try Corpus.data("generated/photo_444.jpg"), options: Self.eighth(640, 480))?.iccProfile == nil)
    }

    @Test("not taken: exact-size thumbnails, scales above 1/8, progressive files", .requires(.corpus))
    func notTaken() throws {
        let data = try Corpus.data("generated/photo_444.jpg")
        #expect(JPEGDCThumbnailDecoder.decode(data, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 80, height: 60))) == nil)
        #expect(JPEGDCThumbnailDecoder.decode(data, options: ImageDecodingOptions(
            thumbnailPixelSize: CGSize(width: 100, height: 100), shrinkOnLoad: .fit)) == nil)   // needs 1/4
        let progressive = try ImageCodersManager.shared.encode(TestImages.photo(160, 120), options: ImageEncodingOptions(format: .jpeg, progressive: true))
        #expect(JPEGDCThumbnailDecoder.decode(progressive, options: Self.eighth(160, 120)) == nil)
        #expect(try JPEGCoder().decode(progressive, options: Self.eighth(160, 120)).width == 20)
    }

    @Test("damaged data never crashes: the DC path declines and libjpeg reports or pads")
    func damaged() throws {
        let data = try ImageCodersManager.shared.encode(TestImages.photo(256, 192), options: ImageEncodingOptions(format: .jpeg, quality: 0.8))
        let options = Self.eighth(256, 192)
        #expect(JPEGDCThumbnailDecoder.decode(data, options: options) != nil)
        // Cut anywhere in the entropy-coded data: declined (short segment) and decoded by libjpeg (gray fill).
        for cut in [data.count / 2, data.count - 3] {
            let truncated = data.prefix(cut)
            #expect(JPEGDCThumbnailDecoder.decode(Data(truncated), options: options) == nil, "cut at \(cut)")
            _ = try? JPEGCoder().decode(Data(truncated), options: options)
        }
        // Seeded random byte changes anywhere: any outcome but a crash or an image of the wrong size.
        var random = SeededRandom(seed: 17)
        for _ in 0..<300 {
            var bytes = [UInt8](data)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                bytes[2 + Int(random.next() % UInt64(bytes.count - 2))] = UInt8(truncatingIfNeeded: random.next())
            }
            if let image = JPEGDCThumbnailDecoder.decode(Data(bytes), options: options) {
                #expect(image.pixels.count == image.width * image.height * 4)
            }
            _ = try? JPEGCoder().decode(Data(bytes), options: options)
        }
    }

    @Test("Huffman tables: short codes by lookup, long codes by the canonical search")
    func huffmanLookup() throws {
        // Codes: "0" → 0x01, "10" → 0x02, then twelve-bit codes beyond the 11-bit lookahead.
        var counts = [Int](repeating: 0, count: 16)
        counts[0] = 1; counts[1] = 1; counts[11] = 2
        let table = try #require(JPEGHuffmanLookup(counts: counts, symbols: [0x01, 0x02, 0x03, 0x04]))
        #expect(table.lookup[0b000_0000_0000] == UInt16(1 | 0x01 << 8))
        #expect(table.lookup[0b100_0000_0000] == UInt16(2 | 0x02 << 8))
        #expect(table.lookup[0b111_1111_1111] == 0)
        // After "0", "10" the next code is 110 0000 0000 0 (12 bits) = first 12-bit code.
        #expect(table.decodeLong(UInt64(0b1100_0000_0000) << 52)?.symbol == 0x03)
        #expect(table.decodeLong(UInt64(0b1100_0000_0001) << 52)?.symbol == 0x04)
        #expect(table.decodeLong(UInt64(0xFFFF) << 48) == nil)
        // An over-full table is rejected.
        counts[0] = 3
        #expect(JPEGHuffmanLookup(counts: counts, symbols: [1, 2, 3, 4, 5, 6]) == nil)
    }
}

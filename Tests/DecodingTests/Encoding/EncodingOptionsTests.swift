import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// `ImageCodersManager.encode(_:options:)`: JPEG quality, progressive, chroma subsampling, flattening,
/// orientation and metadata; PNG levels; WebP lossy and lossless round trips; the older contract.
@Suite(.serialized, .offThePool) struct EncodingOptionsTests {
    let manager = ImageCodersManager.shared

    /// JPEG marker segments before the scan: (marker, payload).
    static func markers(_ data: Data) -> [(UInt8, [UInt8])] {
        let b = [UInt8](data)
        var out: [(UInt8, [UInt8])] = []
        var i = 2
        while i + 4 <= b.count, b[i] == 0xFF {
            let marker = b[i + 1], length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            out.append((marker, Array(b[(i + 4)..<min(b.count, i + 2 + length)])))
            if marker == 0xDA { break }
            i += 2 + length
        }
        return out
    }

    /// Luma sampling factor byte of the frame header (0x22 for 4:2:0, 0x21 for 4:2:2, 0x11 for 4:4:4).
    static func lumaSampling(_ data: Data) -> UInt8? {
        markers(data).first { $0.0 == 0xC0 || $0.0 == 0xC2 }.map { $0.1[7] }
    }

    @Test("JPEG quality: lower quality, smaller file, larger error")
    func jpegQuality() throws {
        let image = TestImages.photo(96, 64)
        let low = try manager.encode(image, options: ImageEncodingOptions(format: .jpeg, quality: 0.3))
        let high = try manager.encode(image, options: ImageEncodingOptions(format: .jpeg, quality: 0.95))
        #expect(low.count < high.count)
        let lowError = PixelComparison.meanAbsoluteError(try manager.decode(low).pixels, image.pixels)
        let highError = PixelComparison.meanAbsoluteError(try manager.decode(high).pixels, image.pixels)
        #expect(highError < lowError && highError < 2.5, "\(lowError) \(highError)")
    }

    @Test("progressive JPEG: SOF2, several scans, decodes like the baseline file")
    func jpegProgressive() throws {
        let image = TestImages.photo(96, 64)
        let progressive = try manager.encode(image, options: ImageEncodingOptions(format: .jpeg, quality: 0.9, progressive: true))
        let baseline = try manager.encode(image, options: ImageEncodingOptions(format: .jpeg, quality: 0.9))
        #expect(Self.markers(progressive).contains { $0.0 == 0xC2 })
        #expect(Self.markers(baseline).contains { $0.0 == 0xC0 } && !Self.markers(baseline).contains { $0.0 == 0xC2 })
        let scans = [UInt8](progressive).indices.dropLast().filter { progressive[$0] == 0xFF && progressive[$0 + 1] == 0xDA }
        #expect(scans.count > 3)
        let a = try manager.decode(progressive), b = try manager.decode(baseline)
        #expect(PixelComparison.meanAbsoluteError(a.pixels, b.pixels) < 1.5)
    }

    @Test("chroma subsampling is written as asked, and 4:4:4 keeps thin red lines sharper",
          arguments: [(ImageEncodingOptions.ChromaSubsampling.yuv420, UInt8(0x22)), (.yuv422, 0x21), (.yuv444, 0x11)])
    func jpegSubsampling(_ subsampling: ImageEncodingOptions.ChromaSubsampling, _ expected: UInt8) throws {
        let stripes = TestImages.make(64, 64) { x, _ in x % 2 == 0 ? (255, 0, 0, 255) : (0, 0, 255, 255) }
        let data = try manager.encode(stripes, options: ImageEncodingOptions(format: .jpeg, quality: 0.95, chromaSubsampling: subsampling))
        #expect(Self.lumaSampling(data) == expected)
        let error = PixelComparison.meanAbsoluteError(try manager.decode(data).pixels, stripes.pixels)
        if subsampling == .yuv444 { #expect(error < 10, "\(error)") } else { #expect(error > 30, "\(error)") }
    }

    @Test("JPEG output carries no metadata; the orientation is applied to the pixels")
    func jpegStripsMetadataAndOrients() throws {
        let image = TestImages.coordinates(40, 20, orientation: .right)
        let data = try manager.encode(image, options: ImageEncodingOptions(format: .jpeg, quality: 0.95))
        #expect(!Self.markers(data).contains { (0xE1...0xEF).contains($0.0) || $0.0 == 0xFE })
        let decoded = try manager.decode(data)
        #expect(decoded.orientation == .up && decoded.width == 20 && decoded.height == 40)
        // normalizesOrientation = false: pixels as stored, orientation in a minimal EXIF block.
        let tagged = try manager.encode(image, options: ImageEncodingOptions(format: .jpeg, normalizesOrientation: false))
        let back = try manager.decode(tagged)
        #expect(back.orientation == .right && back.width == 40)
    }

    @Test("JPEG has no alpha: transparent pixels are composited over the background")
    func jpegFlattens() throws {
        let image = TestImages.make(16, 16) { x, _ in x < 8 ? (0, 0, 0, 0) : (0, 0, 0, 255) }
        let white = try manager.decode(try manager.encode(image, options: ImageEncodingOptions(format: .jpeg, quality: 1)))
        #expect(TestImages.pixel(white, 1, 8)[0] > 245 && TestImages.pixel(white, 14, 8)[0] < 10)
        let red = try manager.decode(try manager.encode(image, options: ImageEncodingOptions(
            format: .jpeg, quality: 1, background: SIMD3(255, 0, 0))))
        let p = TestImages.pixel(red, 1, 8)
        #expect(p[0] > 240 && p[1] < 15 && p[2] < 15, "\(p)")
    }

    @Test("PNG: every level is lossless, level 0 is the largest; out-of-range levels throw")
    func pngLevels() throws {
        let image = TestImages.make(64, 48) { x, y in (UInt8(x * 3), UInt8(y * 5), 90, UInt8(255 - x)) }
        var sizes: [Int] = []
        for level in [0, 1, 6, 9] {
            let data = try manager.encode(image, options: ImageEncodingOptions(format: .png, compressionLevel: level))
            #expect(try manager.decode(data).pixels == image.pixels, "level \(level)")
            sizes.append(data.count)
        }
        #expect(sizes[0] > sizes[1] && sizes[1] >= sizes[3], "\(sizes)")
        #expect(throws: ImageEncodingError.invalidOption("PNG compression level 10 is not 0...9")) {
            try manager.encode(image, options: ImageEncodingOptions(format: .png, compressionLevel: 10))
        }
    }

    @Test("WebP lossless round-trips every byte, alpha included", .requires(.webpEncoder))
    func webpLossless() throws {
        let image = TestImages.make(33, 17) { x, y in (UInt8(x * 7), UInt8(y * 13), UInt8(x ^ y), UInt8(x * 7 + 3)) }
        let data = try manager.encode(image, options: ImageEncodingOptions(format: .webp, lossless: true))
        #expect(ImageFormat(sniffing: data) == .webp)
        let back = try manager.decode(data)
        // libwebp may change the colour of fully transparent pixels; everything visible is exact.
        for i in stride(from: 0, to: image.pixels.count, by: 4) where image.pixels[i + 3] > 0 {
            #expect(Array(back.pixels[i..<i + 4]) == Array(image.pixels[i..<i + 4]))
        }
    }

    @Test("WebP lossy: close to the input, smaller at lower quality, no metadata chunks", .requires(.webpEncoder))
    func webpLossy() throws {
        let image = TestImages.photo(96, 64)
        let high = try manager.encode(image, options: ImageEncodingOptions(format: .webp, quality: 0.9))
        let low = try manager.encode(image, options: ImageEncodingOptions(format: .webp, quality: 0.2))
        #expect(low.count < high.count)
        let back = try manager.decode(high)
        #expect(back.width == 96 && back.height == 64)
        #expect(PixelComparison.meanAbsoluteError(back.pixels, image.pixels) < 3)
        let text = String(decoding: high, as: UTF8.self)
        #expect(!text.contains("EXIF") && !text.contains("ICCP") && !text.contains("XMP "))
        // The older entry point writes lossy WebP too.
        #expect(ImageFormat(sniffing: try manager.encode(image, format: .webp, quality: 0.5)) == .webp)
    }

    @Test("without libwebp, WebP encoding fails with an install hint")
    func webpMissingLibrary() {
        let coder = WebPCoder(soname: "libwebp-not-installed.so.7")
        #expect(coder.canEncode(.webp))
        #expect(coder.encoderUnavailableReason != nil)
        do {
            _ = try coder.encode(TestImages.solid(2, 2, (0, 0, 0, 255)), options: ImageEncodingOptions(format: .webp))
            Issue.record("expected a failure")
        } catch let error as ImageEncodingError {
            guard case .libraryUnavailable(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("install libwebp7"))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("typed errors: no encoder, empty image, inconsistent buffer")
    func errors() {
        let pngOnly = ImageCodersManager(coders: [PNGCoder()])
        #expect(throws: ImageEncodingError.unsupportedFormat(.gif)) {
            try pngOnly.encode(TestImages.solid(2, 2, (0, 0, 0, 255)), options: ImageEncodingOptions(format: .gif))
        }
        #expect(throws: ImageEncodingError.self) {
            try manager.encode(DecodedImage(width: 0, height: 0, pixels: [], format: .png), options: ImageEncodingOptions(format: .jpeg))
        }
        #expect(throws: ImageEncodingError.self) {
            try manager.encode(DecodedImage(width: 4, height: 4, pixels: [0], format: .png), options: ImageEncodingOptions(format: .png))
        }
    }

    @Test("animated images are written as their first frame")
    func firstFrame() throws {
        let a = TestImages.solid(8, 8, (255, 0, 0, 255)), b = TestImages.solid(8, 8, (0, 255, 0, 255))
        let animated = DecodedImage(width: 8, height: 8, pixels: a.pixels, format: .gif,
                                    frames: [ImageFrame(pixels: a.pixels, duration: 0.1), ImageFrame(pixels: b.pixels, duration: 0.1)])
        let back = try manager.decode(try manager.encode(animated, options: ImageEncodingOptions(format: .png)))
        #expect(back.pixels == a.pixels && back.frames.isEmpty)
    }
}

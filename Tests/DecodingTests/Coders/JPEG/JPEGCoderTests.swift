import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// The JPEG coder against the shared corpus, real libjpeg-turbo, no mocks. Every test talks to `JPEGCoder`
/// directly or to a manager holding only it, so other registered coders cannot change the outcome.
@Suite("JPEG coder", .serialized, .offThePool)
struct JPEGCoderTests {
    let coder = JPEGCoder()

    /// Reference hashes from `djpeg` (libjpeg-turbo 2.1.5, same ISLOW + fancy upsampling) for files
    /// expected.json has no pixel hash for: truncated files (djpeg's fake EOI, gray fill) and the
    /// arithmetic-coded ones (lossless transcodes of photo_optimized.jpg's coefficients).
    static let djpegHashes: [String: String] = [
        "generated/trunc_baseline_50pct.jpg": "a32c49c92dfa9a1da299d00d2abfc0d65fe12480c4fcf566dbd8a58310b616da",
        "generated/trunc_progressive_50pct.jpg": "a2ec394211c29f99eb87699af20d37f140c5002519349198fd1a3e41fda560ec",
        "pillow/truncated_jpeg.jpg": "1c061e331d25294eaef874938fcb8baecc3df4c63b6b8fcb5a6aea78d1199ba3",
        "generated/photo_arith.jpg": "41020e73f69449469e32c4e9c944cb74baabb3a18c70238cc386eacabe6c8fc1",
        "generated/photo_progressive_arith.jpg": "41020e73f69449469e32c4e9c944cb74baabb3a18c70238cc386eacabe6c8fc1",
    ]

    /// Typed errors the documented "error" files must produce.
    static let expectedErrors: [String: ImageDecodingError] = [
        "generated/bomb_jpeg_65500x65500.jpg": .tooLarge(width: 65500, height: 65500),
        "generated/jpeg_soi_only.jpg": .truncated,
        "generated/trunc_header_only.jpg": .truncated,
    ]

    // MARK: Corpus conformance

    @Test("every corpus JPEG gets its documented outcome", .requires(.corpus),
          arguments: Corpus.files(format: "jpeg"))
    func corpusFile(_ path: String) throws {
        let entry = try #require(Corpus.expected[path])
        let data = try Corpus.data(path)
        if entry.probe_status == "error" {
            let error = try #require(throws: ImageDecodingError.self) { try coder.decode(data, options: .init()) }
            if let expected = Self.expectedErrors[path] {
                #expect(error == expected, "\(path)")
            } else if case .corrupt = error {
            } else {
                Issue.record("\(path): expected .corrupt, got \(error)")
            }
            return
        }
        let image = try coder.decode(data, options: .init())
        #expect(image.format == .jpeg)
        #expect(image.frames.isEmpty)
        if let width = entry.width, let height = entry.height {
            #expect(image.width == width && image.height == height, "\(path)")
        }
        #expect(image.pixels.count == image.width * image.height * 4)
        let truncated = entry.expected.hasPrefix("partial")
        #expect(image.isIncomplete == truncated, "\(path)")
        if let hash = entry.probe_sha256_rgba ?? entry.sha256_rgba ?? Self.djpegHashes[path] {
            #expect(SHA256.hex(image.pixels) == hash, "\(path)")
        } else {
            Issue.record("\(path): no reference hash")
        }
        let orientation = entry.probe_exif_orientation ?? 0
        #expect(image.orientation == (ImageOrientation(rawValue: orientation) ?? .up), "\(path)")
    }

    @Test("CMYK converts like the reference: R = C*K/255 on Adobe-inverted samples", .requires(.corpus))
    func cmyk() throws {
        for path in ["generated/photo_cmyk_pillow.jpg", "pillow/pil_sample_cmyk.jpg"] {
            let image = try coder.decode(try Corpus.data(path), options: .init())
            #expect(SHA256.hex(image.pixels) == Corpus.expected[path]?.sha256_rgba, "\(path)")
        }
    }

    // MARK: Incremental decoding

    @Test("random chunk sizes (1 byte ... 64 KB) give the one-shot result", .requires(.corpus),
          arguments: [
              "generated/photo_444.jpg", "generated/photo_420_restart.jpg", "generated/photo_progressive.jpg",
              "generated/photo_many_scans.jpg", "generated/photo_arith.jpg", "generated/photo_progressive_arith.jpg",
              "generated/photo_cmyk_pillow.jpg", "generated/photo_gray.jpg", "generated/corrupt_entropy.jpg",
              "generated/trunc_baseline_50pct.jpg", "generated/trunc_progressive_50pct.jpg",
              "pillow/truncated_jpeg.jpg", "pillow/junk_jpeg_header.jpg", "pillow/hopper_orientation_6.jpg",
              "sdwebimage/MonochromeTestImage.jpg", "sdwebimage/TestImageLarge.jpg",
              "generated/jpeg_soi_only.jpg", "generated/trunc_header_only.jpg", "generated/corrupt_sof_length.jpg",
              "generated/bomb_jpeg_65500x65500.jpg", "libjpeg-turbo/monkey12.jpg",
          ])
    func randomChunks(_ path: String) throws {
        let data = try Corpus.data(path)
        let oneShot = Result { try coder.decode(data, options: .init()) }
        var random = SeededRandom(seed: path.utf8.reduce(7) { $0 &* 31 &+ UInt64($1) })
        for round in 0..<3 {
            let decoder = coder.makeIncrementalDecoder(options: .init())
            let result = Result { () throws -> DecodedImage? in
                var offset = 0
                while offset < data.count {
                    // Mostly small pieces, sometimes large ones, always including single bytes.
                    let limit = [1, 16, 512, 4096, 65536][Int(random.next() % 5)]
                    let size = min(data.count - offset, 1 + Int(random.next() % UInt64(limit)))
                    try decoder.append(data.subdata(in: offset..<offset + size), isFinal: false)
                    if round == 1 { _ = decoder.currentImage() }  // previews must not change the result
                    offset += size
                }
                try decoder.append(Data(), isFinal: true)
                return decoder.currentImage()
            }
            switch (oneShot, result) {
            case (.success(let expected), .success(let image)):
                let image = try #require(image, "\(path): no final image")
                #expect(image.pixels == expected.pixels, "\(path) round \(round)")
                #expect(image.width == expected.width && image.height == expected.height)
                #expect(image.isIncomplete == expected.isIncomplete, "\(path)")
                #expect(image.orientation == expected.orientation)
            case (.failure(let expected), .failure(let error)):
                #expect(error as? ImageDecodingError == expected as? ImageDecodingError, "\(path)")
            default:
                Issue.record("\(path): one-shot \(oneShot) but incremental \(result)")
            }
        }
    }

    @Test("baseline: rows appear before the end, undecoded rows transparent", .requires(.corpus))
    func baselinePartialRows() throws {
        let data = try Corpus.data("generated/photo_444.jpg")
        let decoder = coder.makeIncrementalDecoder(options: .init())
        try decoder.append(data.prefix(data.count / 2), isFinal: false)
        let partial = try #require(decoder.currentImage())
        #expect(partial.isIncomplete)
        #expect(partial.width == 640 && partial.height == 480)
        let stride = partial.width * 4
        #expect(partial.pixels[3] == 255, "first row decoded")
        #expect(partial.pixels[(partial.height - 1) * stride + 3] == 0, "last row not yet decoded")
        // Decoded rows equal the final image's rows.
        try decoder.append(data.suffix(from: data.count / 2), isFinal: true)
        let final = try #require(decoder.currentImage())
        #expect(!final.isIncomplete)
        let decodedRows = partial.pixels.withUnsafeBufferPointer { p in
            (0..<partial.height).prefix { p[$0 * stride + 3] == 255 }.count
        }
        #expect(decodedRows > 0 && decodedRows < partial.height)
        #expect(partial.pixels.prefix(decodedRows * stride) == final.pixels.prefix(decodedRows * stride))
    }

    @Test("progressive: a full-frame pass before the end, one per completed scan", .requires(.corpus))
    func progressivePasses() throws {
        let data = try Corpus.data("generated/photo_progressive.jpg")
        let decoder = coder.makeIncrementalDecoder(options: .init())
        var previews: [[UInt8]] = []
        for start in stride(from: 0, to: data.count, by: 2048) {
            try decoder.append(data.subdata(in: start..<min(data.count, start + 2048)), isFinal: false)
            if let image = decoder.currentImage(), image.isIncomplete, previews.last != image.pixels {
                #expect(image.width == 640 && image.height == 480)
                // A progressive pass covers the whole frame: every pixel is opaque.
                #expect(stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 255 })
                previews.append(image.pixels)
            }
        }
        try decoder.append(Data(), isFinal: true)
        let final = try #require(decoder.currentImage())
        #expect(SHA256.hex(final.pixels) == Corpus.expected["generated/photo_progressive.jpg"]?.sha256_rgba)
        #expect(previews.count >= 2 && previews.count <= 10, "one pass per completed scan at most (10 scans)")
    }

    @Test("byte-by-byte feed with a preview after every byte equals one-shot", .requires(.corpus),
          arguments: ["generated/photo_progressive.jpg", "sdwebimage/MonochromeTestImage.jpg", "pillow/truncated_jpeg.jpg"])
    func byteByByte(_ path: String) throws {
        // Previews then also land right after a scan's last byte, before the next scan's header has
        // arrived: ending that output pass suspends and must be completed on a later append.
        let data = try Corpus.data(path)
        let decoder = coder.makeIncrementalDecoder(options: .init())
        var previews = 0
        for i in data.indices {
            try decoder.append(data.subdata(in: i..<(i + 1)), isFinal: false)
            if decoder.currentImage() != nil { previews += 1 }
        }
        try decoder.append(Data(), isFinal: true)
        let final = try #require(decoder.currentImage())
        let oneShot = try coder.decode(data, options: .init())
        #expect(final.pixels == oneShot.pixels)
        #expect(final.isIncomplete == oneShot.isIncomplete)
        #expect(previews > 0)
    }

    @Test("99-scan file: passes render only on demand, result exact", .requires(.corpus))
    func manyScans() throws {
        let data = try Corpus.data("generated/photo_many_scans.jpg")
        let decoder = coder.makeIncrementalDecoder(options: .init())
        var renders = 0
        var last: [UInt8]?
        for start in stride(from: 0, to: data.count, by: 1024) {
            try decoder.append(data.subdata(in: start..<min(data.count, start + 1024)), isFinal: false)
            // A caller throttling to every 8th chunk asks for far fewer passes than there are scans.
            if (start / 1024) % 8 == 0, let image = decoder.currentImage(), image.pixels != last {
                renders += 1
                last = image.pixels
            }
        }
        try decoder.append(Data(), isFinal: true)
        #expect(renders <= 14)
        let final = try #require(decoder.currentImage())
        #expect(SHA256.hex(final.pixels) == Corpus.expected["generated/photo_many_scans.jpg"]?.sha256_rgba)
    }

    @Test("arithmetic-coded data is buffered until the end", .requires(.corpus))
    func arithmeticBuffersUntilFinal() throws {
        let data = try Corpus.data("generated/photo_arith.jpg")
        let decoder = coder.makeIncrementalDecoder(options: .init())
        try decoder.append(data.prefix(data.count - 10), isFinal: false)
        #expect(decoder.currentImage() == nil)
        try decoder.append(data.suffix(10), isFinal: true)
        let final = try #require(decoder.currentImage())
        #expect(SHA256.hex(final.pixels) == Self.djpegHashes["generated/photo_arith.jpg"])
    }

    @Test("the manager's incremental decoder applies the same scaling as decode", .requires(.corpus))
    func managerIncrementalScaling() throws {
        let manager = ImageCodersManager(coders: [JPEGCoder()])
        let data = try Corpus.data("generated/photo_progressive.jpg")
        let options = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 100, height: 100))
        let decoder = try #require(manager.incrementalDecoder(for: data.prefix(16), options: options))
        for start in stride(from: 0, to: data.count, by: 16384) {
            try decoder.append(data.subdata(in: start..<min(data.count, start + 16384)), isFinal: false)
        }
        try decoder.append(Data(), isFinal: true)
        let incremental = try #require(decoder.currentImage())
        let oneShot = try manager.decode(data, options: options)
        #expect(incremental == oneShot)
        #expect(oneShot.width == 100 && oneShot.height == 75)
    }

    // MARK: Scaling

    @Test("DCT scaling equals Pillow draft() and stays at or above the target", .requires(.corpus),
          arguments: [
              ("generated/photo_444.jpg", 80, 60, 8, "550fd96484982d7f9abe44d7831be4368f41a7e2905ad09307272a8aee96a178"),
              ("generated/photo_422.jpg", 160, 120, 4, "7640fe8b5d974887f2e89d700eb3ca4590b96c412cc9a19263444af76e3e01e3"),
              ("generated/photo_progressive.jpg", 80, 60, 8, "a466f210eb90f9343a57558d42cdf3ccd846346077938e42e8f739ebc3c2864d"),
              ("generated/photo_gray.jpg", 320, 240, 2, "36f23132da8818d7c066b6acaf7a6a591c0f630ec5d8e6b929accdd3e08f51d6"),
              ("sdwebimage/TestJFIF.jpg", 504, 378, 8, "3bb2f56961dd0d0337f40140edae4fd3719fc7519f0b39d59781cd64af745a7f"),
          ])
    func dctScaling(_ path: String, width: Int, height: Int, denominator: Int, pillowDraftHash: String) throws {
        let data = try Corpus.data(path)
        let options = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: width, height: height))
        let image = try coder.decode(data, options: options)
        #expect(image.width == width && image.height == height)
        #expect(SHA256.hex(image.pixels) == pillowDraftHash)
        let full = try #require(Corpus.expected[path])
        #expect(JPEGDecompressor.scaleDenominator(
            width: full.width ?? 0, height: full.height ?? 0, options: options) == denominator)
    }

    @Test("thumbnails and scale-down limits reach the exact target through the manager", .requires(.corpus))
    func managerScaling() throws {
        let manager = ImageCodersManager(coders: [JPEGCoder()])
        let data = try Corpus.data("generated/photo_444.jpg")
        let thumb = try manager.decode(data, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 64, height: 64)))
        #expect(thumb.width == 64 && thumb.height == 48)
        let limit = 100 * 1024
        let small = try manager.decode(data, options: ImageDecodingOptions(scaleDownLimitBytes: limit))
        #expect(small.width * small.height * 4 <= limit)
        #expect(small.width >= 180 && small.height >= 135)
        // A target just above half size allows no DCT shrink at all.
        #expect(JPEGDecompressor.scaleDenominator(
            width: 640, height: 480, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 321, height: 480))) == 1)
    }

    // MARK: Encoding

    @Test("encode → decode round trip keeps size, colours and orientation", .requires(.corpus))
    func roundTrip() throws {
        var original = try coder.decode(try Corpus.data("generated/photo_444.jpg"), options: .init())
        original.orientation = .right
        #expect(coder.canEncode(.jpeg) && !coder.canEncode(.png))
        let encoded = try coder.encode(original, format: .jpeg, quality: 0.9)
        #expect(ImageFormat(sniffing: encoded) == .jpeg)
        let decoded = try coder.decode(encoded, options: .init())
        #expect(decoded.width == original.width && decoded.height == original.height)
        #expect(decoded.orientation == .right)
        var total = 0
        for i in original.pixels.indices where i % 4 != 3 { total += abs(Int(original.pixels[i]) - Int(decoded.pixels[i])) }
        let meanError = Double(total) / Double(original.width * original.height * 3)
        #expect(meanError < 3, "mean absolute error \(meanError)")
        // Lower quality, smaller file; alpha is dropped, not an error.
        let transparent = DecodedImage(width: 2, height: 1, pixels: [255, 0, 0, 0, 0, 0, 255, 128], format: .png)
        let tiny = try coder.encode(transparent, format: .jpeg, quality: 0.1)
        #expect(try coder.decode(tiny, options: .init()).pixels[3] == 255)
        #expect(try coder.encode(original, format: .jpeg, quality: 0.3).count < encoded.count)
        #expect(throws: ImageDecodingError.unsupportedFormat) { try coder.encode(original, format: .png, quality: 1) }
        let empty = DecodedImage(width: 0, height: 0, pixels: [], format: .jpeg)
        #expect(throws: ImageDecodingError.zeroPixels) { try coder.encode(empty, format: .jpeg, quality: 1) }
    }
}

/// Marker segments of a JPEG, for building hostile variants of corpus files.
enum JPEGMarkers {
    struct Segment {
        let marker: UInt8
        let start: Int    // offset of the 0xFF
        let payload: Int  // offset after the length field
        let end: Int      // offset after the segment
    }

    /// Segments up to and including every SOS header (entropy data is skipped to the next marker).
    static func segments(in data: Data) -> [Segment] {
        let b = [UInt8](data)
        var result: [Segment] = []
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { i += 1; continue }
            let marker = b[i + 1]
            if marker == 0xFF || marker == 0x00 || (0xD0...0xD7).contains(marker) { i += 1; continue }
            if marker == 0xD9 { break }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            let segment = Segment(marker: marker, start: i, payload: i + 4, end: min(b.count, i + 2 + length))
            result.append(segment)
            i = segment.end
        }
        return result
    }
}

@Suite(.serialized, .offThePool) struct JPEGThumbnailSizeTests {
    /// DCT pre-shrinking must not change the final size: 4031x3023 in a 100x100 box is 100x75 either way.
    @Test func dctScaledThumbnailHasTheExactTargetSize() throws {
        let source = DecodedImage(width: 4031, height: 3023, pixels: [UInt8](repeating: 200, count: 4031 * 3023 * 4), format: .png)
        let jpeg = try JPEGCoder().encode(source, format: .jpeg, quality: 0.5)
        let options = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 100, height: 100))
        let expected = try #require(ImageScaler.targetSize(width: 4031, height: 3023, options: options))
        let image = try ImageCodersManager.shared.decode(jpeg, options: options)
        #expect(image.width == expected.width && image.height == expected.height)
        let decoder = try #require(ImageCodersManager.shared.incrementalDecoder(for: jpeg, options: options))
        try decoder.append(jpeg, isFinal: true)
        #expect(decoder.currentImage()?.width == expected.width && decoder.currentImage()?.height == expected.height)
    }
}

import Foundation
import Testing
import TestImages
import TestRequirements
@testable import Decoding

/// PNG/APNG coder against the shared corpus: documented outcome and exact RGBA hash per file, chunked
/// feeding, partial images, hostile input, encoding. The coder is used directly, so other registered
/// coders cannot interfere.
@Suite(.serialized, .offThePool) struct PNGCoderTests {
    let coder = PNGCoder()

    /// What a file must do, from expected.json and MANIFEST.md.
    enum Outcome: Equatable {
        case pixels            // decode; exact hash (and frames) when the corpus has one
        case partial           // decode with isIncomplete (truncated file)
        case error(ImageDecodingError)
        case anyCorrupt        // .corrupt with whatever message libpng gives
    }

    static func outcome(_ path: String) -> Outcome {
        let name = (path as NSString).lastPathComponent
        switch name {
        case "bomb_png_30000x30000_1bit.png": return .error(.tooLarge(width: 30000, height: 30000))
        case "bomb_png_huge_dims.png": return .error(.tooLarge(width: 0x7FFF_FFFF, height: 1))
        case "png_zero_width.png": return .error(.zeroPixels)
        case "png_signature_only.png": return .error(.truncated)
        case "corrupt_idat_crc.png", "badcrc.png", "broken.png", "broken_data_stream.png", "bad_iCCP.png":
            return .anyCorrupt
        case "huge_IDAT.png", "truncated_end_chunk.png", "truncated_image.png",
             "trunc_png_50pct.png", "trunc_adam7_50pct.png":
            return .partial
        default:
            if name.hasPrefix("huge_") && name.hasSuffix("_chunk.png") { return .error(.truncated) }
            if name.hasPrefix("huge_ju") { return .error(.truncated) }
            return .pixels
        }
    }

    /// Pillow is wrong for 4-bit gray + tRNS (MANIFEST): the libpng reference hash applies there.
    static func referenceHash(_ path: String, _ entry: Corpus.Entry) -> String? {
        if path.hasSuffix("ftbbn0g04.png") { return entry.probe_sha256_rgba }
        return entry.sha256_rgba ?? entry.probe_sha256_rgba
    }

    /// Frames where expected.json records a Pillow bug: iterating apng_dispose_op_previous.png frame by
    /// frame, Pillow's dispose-to-previous restores the canvas it has just blended into (aliasing), so its
    /// last frame stays red. The APNG specification, and Pillow's own test (seeking straight to the last
    /// frame), give all green.
    static let frameHashExceptions = [
        "pillow/apng_dispose_op_previous.png#3": "b74d4937e01ab329a13243a208684ecbee31249b8508871d01aeef8604c9e5eb",
    ]

    static var pngFiles: [String] { Corpus.files(format: "png") }

    @Test(.requires(.corpus)) func corpusHasThePNGFiles() {
        #expect(Self.pngFiles.count >= 120)
    }

    @Test(.requires(.corpus), arguments: pngFiles)
    func corpusFileHasItsDocumentedOutcome(_ path: String) throws {
        let data = try Corpus.data(path)
        let entry = try #require(Corpus.expected[path])
        let result = Result { try coder.decode(data, options: ImageDecodingOptions()) }
        switch Self.outcome(path) {
        case .error(let expected):
            #expect(throws: expected) { try result.get() }
        case .anyCorrupt:
            #expect {
                try result.get()
            } throws: { error in
                if case .corrupt = error as? ImageDecodingError { return true }
                return false
            }
        case .partial:
            let image = try result.get()
            #expect(image.isIncomplete, "\(path) should be a partial image")
            if let w = entry.width, let h = entry.height { #expect(image.width == w && image.height == h) }
            if let hash = Self.referenceHash(path, entry) { #expect(SHA256.hex(image.pixels) == hash, "\(path)") }
        case .pixels:
            let image = try result.get()
            #expect(!image.isIncomplete, "\(path)")
            #expect(image.format == .png)
            #expect(image.pixels.count == image.width * image.height * 4)
            if let w = entry.width, let h = entry.height { #expect(image.width == w && image.height == h, "\(path)") }
            if let hash = Self.referenceHash(path, entry) {
                #expect(SHA256.hex(image.pixels) == hash, "\(path) pixels")
            }
            if let frames = entry.frames_rgba {
                let ours = try image.animationFrames()
                #expect(ours.count == (entry.frames ?? frames.count), "\(path) frame count")
                for (i, expected) in frames.enumerated() where i < ours.count {
                    let hash = Self.frameHashExceptions["\(path)#\(i)"] ?? expected.sha256
                    #expect(SHA256.hex(ours[i].pixels) == hash, "\(path) frame \(i)")
                    if let ms = expected.duration_ms {
                        #expect(abs(ours[i].duration * 1000 - ms) < 0.5, "\(path) frame \(i) duration")
                    }
                }
                #expect(ours.first?.pixels == image.pixels, "pixels are the first frame")
                #expect(image.loopCount == entry.loop ?? 0, "\(path) loop count")
            } else if (entry.frames ?? 1) <= 1 {
                #expect((try image.animationFrames()).isEmpty, "\(path) is a still image")
            }
        }
    }
    // MARK: - Metadata, options

    @Test(.requires(.corpus))
    func eXIfOrientationIsReportedNotApplied() throws {
        let image = try coder.decode(try Corpus.data("generated/png_exif_orientation_6.png"), options: ImageDecodingOptions())
        #expect(image.orientation == .right)
        #expect(image.width == 96 && image.height == 64)
    }

    @Test(.requires(.corpus))
    func firstFrameOnlySkipsTheAnimation() throws {
        let data = try Corpus.data("sdwebimage/TestImageLarge.png")
        let all = try coder.decode(data, options: ImageDecodingOptions())
        let first = try coder.decode(data, options: ImageDecodingOptions(decodeFirstFrameOnly: true))
        #expect((try all.animationFrames()).count == 4)
        #expect((try first.animationFrames()).isEmpty && first.loopCount == 0)
        #expect(first.pixels == all.pixels)
    }

    @Test(.requires(.corpus))
    func pixelLimitAppliesToTheHeader() throws {
        let data = try Corpus.data("generated/photo_adam7.png")
        #expect(throws: ImageDecodingError.tooLarge(width: 640, height: 480)) {
            try coder.decode(data, options: ImageDecodingOptions(maximumPixelCount: 640 * 480 - 1))
        }
        #expect(try coder.decode(data, options: ImageDecodingOptions(maximumPixelCount: 640 * 480)).width == 640)
    }

    // MARK: - Hostile input

    /// A PNG built from chunks, for hand-made hostile streams. CRCs are computed, except for bodies over
    /// 1 MB (zero: only ancillary chunks are that large here, and those are dropped unchecked).
    static func png(_ chunks: [(String, [UInt8])]) -> Data {
        var out = Data(PNGChunkFilter.signature)
        for (type, body) in chunks {
            let typeBytes = Array(type.utf8)
            out.append(contentsOf: withUnsafeBytes(of: UInt32(body.count).bigEndian, Array.init))
            out.append(contentsOf: typeBytes)
            out.append(contentsOf: body)
            let crc = body.count > 1 << 20 ? 0 : crc32(typeBytes + body)
            out.append(contentsOf: withUnsafeBytes(of: crc.bigEndian, Array.init))
        }
        return out
    }

    /// The chunks of a PNG file (type, body).
    static func chunks(of data: Data) -> [(String, [UInt8])] {
        let b = [UInt8](data)
        var out: [(String, [UInt8])] = []
        var i = 8
        while i + 12 <= b.count {
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard i + 12 + length <= b.count else { break }
            out.append((String(decoding: b[i + 4..<i + 8], as: UTF8.self), Array(b[i + 8..<i + 8 + length])))
            i += 12 + length
        }
        return out
    }

    @Test(.requires(.corpus))
    func hugeAncillaryChunksNeverReachLibpng() throws {
        // 9 MB of text (over libpng's 8 MB chunk limit) between IHDR and IDAT: dropped by the chunk filter
        // as it streams past, the image decodes normally.
        let original = try Corpus.data("pngsuite/basn2c08.png")
        var chunks = Self.chunks(of: original)
        chunks.insert(("tEXt", [UInt8](repeating: 0x41, count: 9 << 20)), at: 1)
        let image = try coder.decode(Self.png(chunks), options: ImageDecodingOptions())
        #expect(image == (try coder.decode(original, options: ImageDecodingOptions())))
    }

    @Test(.requires(.corpus))
    func unknownCriticalChunkAndBadChunkNamesAreCorrupt() throws {
        var chunks = Self.chunks(of: try Corpus.data("pngsuite/basn2c08.png"))
        chunks.insert(("ZZZZ", [1, 2, 3]), at: 1)
        #expect(throws: ImageDecodingError.self) { try coder.decode(Self.png(chunks), options: ImageDecodingOptions()) }
        var badName = Self.chunks(of: try Corpus.data("pngsuite/basn2c08.png"))
        badName.insert(("a\u{1}cd", [1]), at: 1)
        #expect(throws: ImageDecodingError.self) { try coder.decode(Self.png(badName), options: ImageDecodingOptions()) }
    }

    @Test(.requires(.corpus))
    func brokenAnimationChunksLeaveAStillImage() throws {
        let original = try Corpus.data("pillow/apng_num_plays.png")
        let still = try coder.decode(original, options: ImageDecodingOptions(decodeFirstFrameOnly: true))
        // An fcTL reaching outside the canvas ends the animation before it starts.
        var chunks = Self.chunks(of: original)
        let index = try #require(chunks.firstIndex { $0.0 == "fcTL" })
        chunks[index].1[12] = 0xFF  // x offset 0xFF000000
        let image = try coder.decode(Self.png(chunks), options: ImageDecodingOptions())
        #expect((try image.animationFrames()).isEmpty && image.pixels == still.pixels)
        // Garbage frame data: the index pass does not decode frames, so the animation keeps its frame count and
        // the broken frame throws a typed error when it is asked for; preloading leaves the frames on demand.
        var garbage = Self.chunks(of: original)
        for i in garbage.indices where garbage[i].0 == "fdAT" {
            garbage[i].1 = Array(garbage[i].1.prefix(4)) + [UInt8](repeating: 0x55, count: 40)
        }
        let damaged = try coder.decode(Self.png(garbage), options: ImageDecodingOptions())
        #expect(damaged.pixels == still.pixels && damaged.frameCount == 3)
        let animation = try #require(damaged.animation)
        #expect(try animation.frame(at: 0) == still.pixels)
        #expect(throws: ImageDecodingError.corrupt("APNG frame 1 could not be decoded")) { try animation.frame(at: 1) }
        let preloaded = try ImageCodersManager.shared.decode(Self.png(garbage), options: ImageDecodingOptions(preloadAllFrames: true))
        #expect(preloaded.frames.isEmpty && preloaded.frameCount == 3)
    }

    @Test(.requires(.corpus), arguments: [
        "generated/photo_adam7.png", "pillow/apng_dispose_op_previous.png", "sdwebimage/IndexedPNG.png",
        "pngsuite/basn4a16.png",
    ])
    func truncationsAndMutationsNeverTrap(_ path: String) throws {
        let data = try Corpus.data(path)
        var rng = SeededRandom(seed: UInt64(data.count))
        var images = 0, errors = 0
        func attempt(_ bytes: Data) {
            switch expectImageOrTypedError(path, { try coder.decode(bytes, options: ImageDecodingOptions()) }) {
            case .image: images += 1
            case .typedError: errors += 1
            case .untypedError: break
            }
        }
        for _ in 0..<40 { attempt(data.prefix(Int.random(in: 0..<data.count, using: &rng))) }
        for _ in 0..<80 {
            var bytes = [UInt8](data)
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                bytes[Int.random(in: 8..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            attempt(Data(bytes))
        }
        #expect(images + errors == 120)
        #expect(images > 0 && errors > 0)
    }

    @Test func nonPNGDataIsNotClaimedAndFailsCleanly() throws {
        #expect(!coder.canDecode(Data("<html>".utf8)))
        #expect(!coder.canDecode(Data()))
        #expect(throws: ImageDecodingError.self) {
            try coder.decode(Data([0x89, 0x50, 0x4E, 0x47, 0, 0, 0, 0, 1, 2]), options: ImageDecodingOptions())
        }
        #expect(throws: ImageDecodingError.truncated) {
            try coder.decode(Data(PNGChunkFilter.signature), options: ImageDecodingOptions())
        }
    }

    // MARK: - Encoding

    @Test func encodesRGBAAndDecodesIdentically() throws {
        var pixels: [UInt8] = []
        for y in 0..<37 {
            for x in 0..<53 { pixels += [UInt8(x * 4), UInt8(y * 6), UInt8((x + y) % 256), UInt8((x * y) % 256)] }
        }
        let image = DecodedImage(width: 53, height: 37, pixels: pixels, format: .png)
        #expect(coder.canEncode(.png) && !coder.canEncode(.jpeg))
        let data = try coder.encode(image, format: .png, quality: 0.1)
        #expect(data[25] == 6, "colour type RGBA")
        let decoded = try coder.decode(data, options: ImageDecodingOptions())
        #expect(decoded.pixels == pixels && decoded.width == 53 && decoded.height == 37)
    }

    @Test func opaqueImagesAreWrittenAsRGB() throws {
        var pixels: [UInt8] = []
        for i in 0..<(64 * 48) { pixels += [UInt8(i % 251), UInt8(i % 13 * 19), UInt8(i / 64), 255] }
        let image = DecodedImage(width: 64, height: 48, pixels: pixels, format: .png)
        let data = try coder.encode(image, format: .png, quality: 1)
        #expect(data[25] == 2, "colour type RGB")
        #expect(try coder.decode(data, options: ImageDecodingOptions()).pixels == pixels)
        #expect(try ImageCodersManager(coders: [PNGCoder()]).encode(image, format: .png) == data)
    }

    @Test func encodingRejectsInconsistentImages() {
        let short = DecodedImage(width: 4, height: 4, pixels: [0, 0, 0], format: .png)
        #expect(throws: ImageDecodingError.self) { try coder.encode(short, format: .png, quality: 1) }
        let empty = DecodedImage(width: 0, height: 4, pixels: [], format: .png)
        #expect(throws: ImageDecodingError.zeroPixels) { try coder.encode(empty, format: .png, quality: 1) }
        let one = DecodedImage(width: 1, height: 1, pixels: [1, 2, 3, 4], format: .png)
        #expect(throws: ImageDecodingError.unsupportedFormat) { try coder.encode(one, format: .jpeg, quality: 1) }
    }
}

import CImageCodecs
import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// AVIF through libavif: the coder's place among the built-ins, libheif as the fallback (libavif absent, a
/// version the shim refuses, a file libavif refuses), hostile input and the limits, and AVIF output.
@Suite(.serialized, .offThePool) struct AVIFCoderTests {
    static func still(_ arguments: [String] = [], width: Int = 64, height: Int = 48, alpha: Bool = true) throws -> Data {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = AVIFTools.pattern(width: width, height: height, alpha: alpha)
        return try Data(contentsOf: try AVIFTools.encode([image], ["-s", "10"] + arguments, in: folder, name: "still"))
    }

    static func sequence(frames: Int, _ arguments: [String] = []) throws -> Data {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let images = (0..<frames).map { AVIFTools.pattern(width: 48, height: 32, frame: $0) }
        return try Data(contentsOf: try AVIFTools.encode(images, ["-s", "10"] + arguments, in: folder, name: "sequence"))
    }

    @Test(.requires(.libavif, .corpus))
    func builtInManagerDecodesAVIFThroughLibavif() throws {
        let coders = ImageCodersManager().coders
        let avif = try #require(coders.firstIndex { $0 is AVIFCoder })
        let heif = try #require(coders.firstIndex { $0 is HEIFCoder })
        #expect(avif > heif, "AVIFCoder must be asked before HEIFCoder")
        let version = try #require(AVIFCoder().libraryVersion)
        #expect(version.hasPrefix("libavif 0.11") || version.hasPrefix("libavif 1."), "\(version)")
        let image = try ImageCodersManager().decode(try Corpus.data("pillow/avif_hopper.avif"))
        #expect(image.format == .avif && image.width == 128 && image.height == 128)
        // The corpus's reference is libavif's own (Pillow's plugin): libheif differed by up to 2 levels here.
        let entry = try #require(Corpus.expected["pillow/avif_hopper.avif"])
        let reference = try #require(entry.thumb16_rgba_b64.flatMap { Data(base64Encoded: $0) })
        #expect(PixelComparison.meanAbsoluteError(PixelComparison.thumb16(image), Array(reference)) <= 1)
    }

    @Test func theShimAcceptsExactlyTheLayoutsItMirrors() {
        for version in ["0.11.0", "0.11.1", "1.0.0", "1.0.4", "1.1.1", "1.2.0", "1.3.0", "1.4.2", "1.4.2-dev"] {
            #expect(cic_avif_supports_version(version) == 1, "\(version)")
        }
        for version in ["0.10.1", "0.9.3", "1.5.0", "2.0.0", "", "one", "11"] {
            #expect(cic_avif_supports_version(version) == 0, "\(version)")
        }
    }

    /// A libavif reporting a version the shim was not written against is refused at load time, naming the
    /// version; decoding then falls back to libheif.
    @Test(.requires(.libheif, .corpus))
    func anUnknownLibavifVersionIsRefusedByName() throws {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("fake.c")
        let library = folder.appendingPathComponent("libavif-fake.so.17")
        try "const char *avifVersion(void) { return \"1.5.0\"; }\n".write(to: source, atomically: true, encoding: .utf8)
        let clang = try #require(Executables.find("clang"), "clang (part of the Swift toolchain)")
        try AVIFTools.run(clang, ["-shared", "-fPIC", "-o", library.path, source.path])
        let coder = AVIFCoder(sonames: [library.path], fallback: HEIFCoder())
        let reason = try #require(coder.unavailableReason)
        #expect(reason.contains("libavif 1.5.0 is not supported"), "\(reason)")
        #expect(coder.libraryVersion == nil)
        let image = try coder.decode(try Corpus.data("pillow/avif_hopper.avif"), options: ImageDecodingOptions())
        #expect(image.width == 128 && image.format == .avif)
    }

    @Test(.requires(.libheif, .corpus))
    func withoutLibavifLibheifDecodes() throws {
        let coder = AVIFCoder(sonames: ["libavif-not-installed.so.99"], fallback: HEIFCoder())
        #expect(coder.unavailableReason?.contains("libavif-not-installed.so.99") == true)
        let data = try Corpus.data("pillow/avif_hopper.avif")
        #expect(try coder.decode(data, options: ImageDecodingOptions()) == HEIFCoder().decode(data, options: ImageDecodingOptions()))
        let neither = AVIFCoder(sonames: ["libavif-not-installed.so.99"], fallback: HEIFCoder(soname: "libheif-not-installed.so.99"))
        #expect(throws: ImageDecodingError.unsupportedFormat) { try neither.decode(data, options: ImageDecodingOptions()) }
        // Writing AVIF names the missing library and what to install.
        #expect(coder.encoderUnavailableReason?.contains("libavif-not-installed.so.99") == true)
        #expect {
            try coder.encode(AVIFTools.pattern(width: 4, height: 4), options: ImageEncodingOptions(format: .avif))
        } throws: { error in
            guard case ImageEncodingError.libraryUnavailable(let why) = error else { return false }
            return why.contains("install libavif15")
        }
    }

    /// Two `ipma` boxes of the same version and flags: libavif refuses the file in every mode, libheif reads it,
    /// and the pixels are the one-box file's.
    @Test(.requires(.libavif, .libheif, .avifTools))
    func twoIPMABoxesGoToLibheif() throws {
        let original = try Self.still()
        let split = try #require(AVIFRewriting.splittingIPMA(original))
        let libavifAlone = AVIFImageDecoding(lib: try LibAVIF.load(firstOf: LibAVIF.defaultSonames).get(), options: ImageDecodingOptions())
        #expect {
            try libavifAlone.decode(split)
        } throws: { error in
            guard case ImageDecodingError.corrupt(let why) = error else { return false }
            return why.contains("ipma")
        }
        let image = try AVIFCoder().decode(split, options: ImageDecodingOptions())
        let reference = try AVIFCoder().decode(original, options: ImageDecodingOptions())
        #expect(image.width == reference.width && image.height == reference.height)
        // libheif's YUV to RGB conversion differs a little from libavif's.
        #expect(AVIFTools.difference(image.pixels, reference.pixels).mean <= 2)
    }

    /// A grid listing one tile twice, which libavif 0.11 refuses: libheif decodes it.
    @Test(.requires(.libavif, .libheif))
    func aGridLibavifRefusesGoesToLibheif() throws {
        let data = try AVIFFixtures.data("libavif/color_grid_alpha_grid_tile_shared_in_dimg.avif")
        let image = try AVIFCoder().decode(data, options: ImageDecodingOptions())
        #expect(image.format == .avif && image.width == 80 && image.height == 80)
    }

    @Test(.requires(.libavif, .avifTools))
    func cutFilesAreTruncated() throws {
        for data in [try Self.still(), try Self.sequence(frames: 4)] {
            for length in [1, 12, 40, 100, data.count / 3, data.count / 2, data.count - 1] {
                #expect(throws: ImageDecodingError.truncated, "cut at \(length) of \(data.count)") {
                    try AVIFCoder().decode(data.prefix(length), options: ImageDecodingOptions())
                }
            }
        }
        #expect(throws: ImageDecodingError.truncated) { try AVIFCoder().decode(Data(), options: ImageDecodingOptions()) }
    }

    @Test(.requires(.libavif, .avifTools))
    func damagedFilesGiveTypedErrors() throws {
        var rng = SeededRandom(seed: 41)
        for data in [try Self.still(), try Self.sequence(frames: 3, ["-k", "1"])] {
            expectBitFlippedCopiesDecodeOrThrowTyped(data, with: AVIFCoder(), copies: 60, bitsPerCopy: 3, using: &rng, "avif")
        }
        // A crash proof of concept reported against libavif.
        let poc = try AVIFFixtures.data("libavif/poc_b_506387278.avif")
        do {
            let image = try AVIFCoder().decode(poc, options: ImageDecodingOptions())
            for index in 0..<image.frameCount { _ = try? image.animation?.frame(at: index) }
        } catch is ImageDecodingError {}
    }

    /// The pixel limit refuses a header before any pixel memory: the declared (ispe) size is checked, so a lie
    /// that makes it huge costs nothing, and libavif's own limit for dav1d follows it.
    @Test(.requires(.libavif, .avifTools))
    func headerBombsAreRefusedBeforeDecoding() throws {
        let data = try Self.still(width: 64, height: 48)
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 64 * 48 - 1
        #expect(throws: ImageDecodingError.tooLarge(width: 64, height: 48)) { try AVIFCoder().decode(data, options: options) }
        let bomb = AVIFRewriting.settingISPE(data, width: 60_000, height: 60_000)
        #expect(throws: ImageDecodingError.tooLarge(width: 60_000, height: 60_000)) {
            try AVIFCoder().decode(bomb, options: ImageDecodingOptions())
        }
        // A declared size other than the picture's: libavif scales the picture to it (AV1's spatial layers use
        // that), so the image has the size that was checked and reserved, never the picture's.
        for (width, height) in [(8, 8), (128, 96)] {
            let lying = AVIFRewriting.settingISPE(data, width: width, height: height)
            let image = try AVIFCoder().decode(lying, options: ImageDecodingOptions())
            #expect(image.width == width && image.height == height && image.pixels.count == width * height * 4)
            options.maximumPixelCount = width * height - 1
            #expect(throws: ImageDecodingError.tooLarge(width: width, height: height)) { try AVIFCoder().decode(lying, options: options) }
        }
        // libavif's own limit (dav1d's frame size limit) follows maximumPixelCount: the 64×48 picture behind an
        // 8×8 header is refused when 8×8 is all the limit allows, before libavif scales it.
        let lib = try LibAVIF.load(firstOf: LibAVIF.defaultSonames).get()
        let small = AVIFRewriting.settingISPE(data, width: 8, height: 8)
        options.maximumPixelCount = 64
        #expect(throws: ImageDecodingError.self) { try AVIFImageDecoding(lib: lib, options: options).decode(small) }
        options.maximumPixelCount = 64 * 48
        #expect(try AVIFImageDecoding(lib: lib, options: options).decode(small).width == 8)
    }

    /// `maximumFrameCount` is libavif's own frame-count limit: a sequence with more frames is refused while parsing.
    @Test(.requires(.libavif, .avifTools))
    func frameCountBombsAreRefused() throws {
        let data = try Self.sequence(frames: 5)
        var options = ImageDecodingOptions()
        options.maximumFrameCount = 4
        #expect(throws: ImageDecodingError.tooManyFrames(limit: 4)) { try AVIFCoder().decode(data, options: options) }
        options.maximumFrameCount = 5
        #expect(try AVIFCoder().decode(data, options: options).frameCount == 5)
    }

    @Test(.requires(.libavif, .avifEncoder, .avifTools))
    func encodesAVIF() throws {
        let source = AVIFTools.pattern(width: 61, height: 37, alpha: true)
        let data = try ImageCodersManager.shared.encode(source, options: ImageEncodingOptions(format: .avif, quality: 0.9))
        #expect(ImageFormat(sniffing: data) == .avif)
        let decoded = try ImageCodersManager.shared.decode(data)
        #expect(decoded.width == 61 && decoded.height == 37)
        // 4:2:0 blurs the pattern's one-colour stripes; the rest comes through.
        let difference = AVIFTools.difference(decoded.pixels, source.pixels)
        #expect(difference.mean <= 8, "mean \(difference.mean)")
        // Alpha is kept; an opaque image gets no alpha plane.
        #expect(decoded.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element < 255 })
        let opaque = AVIFTools.pattern(width: 16, height: 16)
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("opaque.avif")
        try ImageCodersManager.shared.encode(opaque, format: .avif, quality: 0.5).write(to: file)
        #expect(try AVIFTools.run("avifdec", ["--info", file.path]).contains("Alpha          : Absent"))
        // Lower quality, smaller file.
        let small = try ImageCodersManager.shared.encode(source, options: ImageEncodingOptions(format: .avif, quality: 0.2))
        #expect(small.count < data.count)
    }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// The JPEG XL coder's behaviour beyond pixel conformance (JXLConformanceTests): sniffing, animations on demand,
/// limits, truncation, the incremental decoder, the library's absence.
@Suite(.offThePool) struct JXLCoderTests {
    static func fixture(_ name: String) throws -> Data { try DecoderFixtures.data("jxl/\(name)") }

    @Test func sniffsTheCodestreamAndTheContainer() {
        #expect(ImageFormat(sniffing: Data([0xFF, 0x0A, 0x60, 0x41])) == .jxl)
        let container: [UInt8] = [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0, 0, 0x14]
        #expect(ImageFormat(sniffing: Data(container)) == .jxl)
        // Not JPEG XL: JPEG's marker, a lone 0xFF, a box of another size, an ISOBMFF image.
        #expect(ImageFormat(sniffing: Data([0xFF, 0xD8, 0xFF, 0xE0])) == .jpeg)
        #expect(ImageFormat(sniffing: Data([0xFF])) == .undefined)
        #expect(ImageFormat(sniffing: Data([0, 0, 0, 0x0D] + container[4...])) == .undefined)
        #expect(ImageFormat.jxl.rawValue == "jxl" && ImageFormat.jxl.mimeType == "image/jxl" && ImageFormat.jxl.fileExtension == "jxl")
        #expect(JXLCoder().canDecode(Data(container)) && !JXLCoder().canDecode(Data([0xFF, 0xD8, 0xFF])))
    }

    @Test(.requires(.libjxl)) func everyCommittedFileDecodesWhole() throws {
        for name in ["still-lossy.jxl", "animation.jxl", "animation-3-loops.jxl", "progressive.jxl", "recompressed-jpeg.jxl",
                     "layer-larger-than-canvas.jxl"] {
            let image = try ImageCodersManager.shared.decode(try Self.fixture(name))
            #expect(image.format == .jxl && !image.isIncomplete, "\(name)")
            #expect(image.pixels.count == image.width * image.height * 4, "\(name)")
        }
    }

    @Test(.requires(.libjxl)) func animationReportsTimingAndDecodesFramesOnDemand() throws {
        let data = try Self.fixture("animation-3-loops.jxl")
        let image = try ImageCodersManager.shared.decode(data)
        let animation = try #require(image.animation)
        #expect(image.frameCount == 3 && animation.loopCount == 3 && image.loopCount == 3)
        // 100 and 40 ms as written; 10 ms shows for 100 ms (the browser rule every animated format follows here).
        #expect((0..<3).map { animation.duration(at: $0) } == [0.1, 0.04, 0.1])
        let inOrder = try (0..<3).map { try animation.frame(at: $0) }
        #expect(inOrder[0] == image.pixels, "frame 0 is the poster")
        #expect(Set(inOrder).count == 3, "each frame differs")
        // The frames' first pixel: red is (x * 5 + shift) & 255 with shifts 0, 80, 160 (make_jxl_fixtures.py).
        #expect(inOrder.map { $0[0] } == [0, 80, 160])
        // Backwards and at random, from fresh animations and the same one: the same pixels.
        let fresh = try #require(try ImageCodersManager.shared.decode(data).animation)
        #expect(try [2, 1, 0].map { try fresh.frame(at: $0) } == [inOrder[2], inOrder[1], inOrder[0]])
        #expect(try [1, 2, 0, 2, 1].map { try animation.frame(at: $0) } == [inOrder[1], inOrder[2], inOrder[0], inOrder[2], inOrder[1]])
        #expect(throws: ImageDecodingError.frameIndexOutOfRange(index: 3, frameCount: 3)) { try animation.frame(at: 3) }
        // Eager frames on request, and the first frame alone.
        let preloaded = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(preloadAllFrames: true))
        #expect(preloaded.frames.map(\.pixels) == inOrder && preloaded.frames.map(\.duration) == [0.1, 0.04, 0.1])
        let first = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(decodeFirstFrameOnly: true))
        #expect(first.frameCount == 1 && first.animation == nil && first.pixels == inOrder[0])
    }

    @Test(.requires(.libjxl)) func framesOnDemandFollowThumbnailScaling() throws {
        let data = try Self.fixture("animation-3-loops.jxl")
        let options = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 24, height: 24))
        let image = try ImageCodersManager.shared.decode(data, options: options)
        let animation = try #require(image.animation)
        #expect(image.width == 24 && image.height == 16 && animation.width == 24)
        #expect(try animation.frame(at: 0) == image.pixels)
        #expect(try animation.frame(at: 2).count == 24 * 16 * 4)
    }

    @Test(.requires(.libjxl)) func limitsAreCheckedAtTheHeader() throws {
        let still = try Self.fixture("still-lossy.jxl")  // 48×32
        #expect(throws: ImageDecodingError.tooLarge(width: 48, height: 32)) {
            try ImageCodersManager.shared.decode(still, options: ImageDecodingOptions(maximumPixelCount: 48 * 32 - 1))
        }
        #expect(throws: ImageDecodingError.tooManyFrames(limit: 2)) {
            try ImageCodersManager.shared.decode(try Self.fixture("animation-3-loops.jxl"), options: ImageDecodingOptions(maximumFrameCount: 2))
        }
        // A 100×100 layer on an 8×8 canvas: libjxl would allocate the whole layer before cropping it.
        let bomb = try Self.fixture("layer-larger-than-canvas.jxl")
        #expect(throws: ImageDecodingError.tooLarge(width: 100, height: 100)) {
            try ImageCodersManager.shared.decode(bomb, options: ImageDecodingOptions(maximumPixelCount: 8 * 8 * 10))
        }
        #expect(throws: ImageDecodingError.tooLarge(width: 100, height: 100)) {
            try IncrementalConformanceTests.decodeInChunks(bomb, seed: 1, options: ImageDecodingOptions(maximumPixelCount: 640)).get()
        }
    }

    @Test(.requires(.libjxl)) func theDecodeBudgetIsReservedBeforeDecoding() throws {
        let flat = try Self.fixture("flat-1024.jxl")  // 1024×1024 RGB
        let budget = ImageDecodingBudget(limitBytes: 64 << 20)
        let told = Mismatches()
        var options = ImageDecodingOptions(decodingBudget: budget)
        options.willAllocateImage = DecodeAllocationHook { told.add($0) }
        let image = try ImageCodersManager.shared.decode(flat, options: options)
        #expect(image.width == 1024 && told.all == [1024 * 1024 * 4], "the image's bytes, told before the pixels exist")
        #expect(budget.reservedBytes == 0, "released when the decode returns")
        // The canvas and libjxl's float planes (16 bytes a pixel for RGB) do not fit in 1 MiB: refused at the header.
        let small = ImageDecodingBudget(limitBytes: 1 << 20)
        #expect(throws: ImageDecodingError.exceedsDecodingBudget(width: 1024, height: 1024, bytes: 1024 * 1024 * 16, budgetBytes: 1 << 20)) {
            try ImageCodersManager.shared.decode(flat, options: ImageDecodingOptions(decodingBudget: small))
        }
    }

    /// Cut anywhere, a file gives `.truncated` before its first pixels, a partial image after them, never
    /// anything else; and the incremental decoder agrees with the one-shot decode at every cut.
    @Test(.requires(.libjxl), arguments: ["still-lossy.jxl", "progressive.jxl", "animation.jxl", "recompressed-jpeg.jxl"])
    func truncatedFilesGiveTruncatedOrAPartialImage(_ name: String) throws {
        let data = try Self.fixture(name)
        let whole = try ImageCodersManager.shared.decode(data)
        let step = max(1, data.count / 97)
        for cut in stride(from: 0, to: data.count, by: step) {
            let prefix = data.prefix(cut)
            let oneShot = Result { try ImageCodersManager.shared.decode(prefix) }
            guard ImageFormat(sniffing: prefix) == .jxl else {  // too short to be recognised
                #expect(throws: ImageDecodingError.unsupportedFormat) { try oneShot.get() }
                continue
            }
            switch oneShot {
            case .success(let image):
                // libjxl reports no size for an animation's last frame: a cut inside its data shows only when that
                // frame is drawn (as far as the data goes). Every other cut marks the image incomplete.
                let cutInLastFrame = image.frameCount == whole.frameCount && whole.frameCount > 1
                let incomplete = image.isIncomplete
                #expect(incomplete || cutInLastFrame, "\(name) cut at \(cut): a partial image is marked incomplete")
                let sameSize = image.width == whole.width && image.height == whole.height
                #expect(sameSize, "\(name) cut at \(cut)")
            case .failure(let error):
                #expect(error as? ImageDecodingError == .truncated, "\(name) cut at \(cut): \(error)")
            }
            let chunked = IncrementalConformanceTests.decodeInChunks(prefix, seed: UInt64(cut))
            switch (oneShot, chunked) {
            case (.success(let a), .success(let b)):
                let same = a.pixels == b.pixels && a.isIncomplete == b.isIncomplete
                #expect(same, "\(name) cut at \(cut): chunked differs")
            case (.failure(let a), .failure(let b)):
                #expect(a as? ImageDecodingError == b as? ImageDecodingError, "\(name) cut at \(cut): \(a) / \(b)")
            default:
                Issue.record("\(name) cut at \(cut): one-shot \(oneShot), chunked \(chunked)")
            }
        }
    }

    @Test(.requires(.libjxl), arguments: ["still-lossy.jxl", "progressive.jxl", "animation.jxl", "animation-3-loops.jxl",
                                           "recompressed-jpeg.jxl"])
    func chunkedEqualsOneShot(_ name: String) throws {
        let data = try Self.fixture(name)
        let oneShot = try ImageCodersManager.shared.decode(data)
        for seed in 0..<4 as Range<UInt64> {
            let chunked = try IncrementalConformanceTests.decodeInChunks(data, seed: seed).get()
            let same = chunked.pixels == oneShot.pixels && !chunked.isIncomplete
            #expect(same, "\(name) seed \(seed)")
            #expect(try chunked.animationFrames() == oneShot.animationFrames())
            #expect(chunked.colorState == oneShot.colorState && chunked.loopCount == oneShot.loopCount)
        }
    }

    /// A progressive file shows its passes before its last byte: partial images, each marked incomplete, that
    /// get closer to the final image.
    @Test(.requires(.libjxl, .jxlTools)) func progressivePassesShowBeforeTheEnd() throws {
        let folder = try JXLTestFiles.temporaryFolder()
        defer { JXLTestFiles.remove(folder) }
        for flags in [["-d", "0", "-p"], ["-d", "1", "--progressive_dc=1"]] {
            let file = try JXLTestFiles.make(JXLTestFiles.Case(
                name: "progressive\(flags.count)", input: .png(width: 512, height: 384, channels: 3, bitDepth: 8), cjxl: flags), in: folder)
            let data = try Data(contentsOf: file)
            let final = try ImageCodersManager.shared.decode(data)
            let decoder = try #require(ImageCodersManager.shared.incrementalDecoder(for: data, options: ImageDecodingOptions()))
            var errors: [Double] = []
            var offset = 0
            while offset < data.count {
                let end = min(data.count, offset + max(512, data.count / 40))
                try decoder.append(data.subdata(in: offset..<end), isFinal: end == data.count)
                offset = end
                guard end < data.count, let partial = decoder.currentImage() else { continue }
                #expect(partial.isIncomplete && partial.width == final.width && partial.height == final.height)
                errors.append(PixelDifference(partial.pixels, final.pixels).mean)
            }
            #expect(Set(errors).count >= 2, "\(flags): at least two different previews before the end, got \(errors)")
            #expect(errors.last ?? 0 <= errors.first ?? 0, "\(flags): later previews are closer: \(errors)")
            let last = try #require(decoder.currentImage())
            #expect(!last.isIncomplete && last.pixels == final.pixels)
        }
    }

    @Test func aMissingLibraryIsUnsupportedFormatNamingIt() throws {
        let coder = JXLCoder(soname: "libjxl.so.0.404")
        #expect(coder.unavailableReason?.contains("libjxl.so.0.404") == true)
        #expect(coder.libraryVersion == nil)
        #expect(throws: ImageDecodingError.unsupportedFormat) { try coder.decode(Data([0xFF, 0x0A, 0, 0]), options: ImageDecodingOptions()) }
        #expect(!coder.canIncrementallyDecode(Data([0xFF, 0x0A, 0, 0])))
    }

    /// A library answering JxlDecoderVersion() with 0.12.1, built here: refused at load, naming the version, and the
    /// coder then fails explicitly instead of reading structs it was not checked against.
    @Test(.requires(.cCompiler)) func aLibjxlOfAnotherVersionIsRefusedNamingIt() throws {
        let folder = try JXLTestFiles.temporaryFolder()
        defer { JXLTestFiles.remove(folder) }
        let source = folder.appendingPathComponent("fake.c"), library = folder.appendingPathComponent("libjxl.so.0.12")
        try Data("unsigned JxlDecoderVersion(void) { return 12001; }\n".utf8).write(to: source)
        try Tool.run([try #require(CCompiler.path), "-shared", "-fPIC", "-o", library.path, source.path])
        let coder = JXLCoder(soname: library.path)
        #expect(coder.unavailableReason
                == "\(library.path) unavailable: libjxl 0.12.1 is not a version this package was checked against (0.7 to 0.11)")
        #expect(coder.libraryVersion == nil)
        #expect(throws: ImageDecodingError.unsupportedFormat) { try coder.decode(try Self.fixture("still-lossy.jxl"), options: ImageDecodingOptions()) }
    }

    @Test(.requires(.libjxl)) func theLoadedVersionIsOneTheShimWasCheckedAgainst() throws {
        let version = try #require(JXLCoder().libraryVersion)
        let minor = try #require(Int(version.split(separator: ".")[1]))
        #expect(version.hasPrefix("libjxl 0.") && (7...11).contains(minor), "\(version)")
    }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Every file of ../shared/corpus decodes to its documented outcome (expected.json / MANIFEST.md).
@Suite(.serialized, .offThePool) struct CorpusConformanceTests {
    /// What expected.json says must happen to a file.
    enum Outcome: Equatable {
        case decode            // pixels must match the reference
        case partial           // a truncated file: a partial image (or a truncation error), never a crash
        case error             // a typed ImageDecodingError
        case tooLarge          // rejected by the pixel limit before allocating
        case decodeOrError     // either is fine (corrupt entropy, HEIC files Pillow cannot open)
        case tooLargeOrDecode  // "reject or clamp canvas to a pixel limit"
        case errorOrPartial    // Pillow raises, but the libjpeg/libpng reference decoded a partial (truncated) image

        init(entry: Corpus.Entry) {
            let e = entry.expected
            if e.hasPrefix("partial") { self = .partial }
            else if e.hasPrefix("reject or clamp") { self = .tooLargeOrDecode }
            else if e.hasPrefix("reject by pixel limit") { self = .tooLarge }
            else if e.contains("or error") { self = .decodeOrError }
            else if entry.format == "heic" && e.hasPrefix("error") { self = .decodeOrError }  // Pillow has no HEIC; libheif decodes them
            else if e.hasPrefix("decode") || e.hasPrefix("no crash; decode") { self = .decode }
            else if entry.probe_status == "partial" { self = .errorOrPartial }
            else { self = .error }
        }
    }

    /// Files whose documented outcome we deliberately differ from, and why.
    static let documentedDifferences: [String: String] = [
        "pillow/png_decompression_dos.png":
            "the bomb is in text chunks, which are never inflated: the 1x1 image decodes without a large allocation",
        "pillow/g_rgb32bf.bmp":
            "bmpsuite's valid rgb32bf (a green mask not on a byte boundary): browsers decode it, Pillow refuses it "
            + "(BMPCoderTests.bitfieldMasksOfAnyWidthDecode)",
        "sdwebimage/TestHDR.jxl":
            "expected.json predates the JPEG XL decoder (issue 41): the file decodes at djxl's size "
            + "(JXLConformanceTests.theCorpusFileDecodesAtDjxlsSize)",
    ]

    /// Animation frames whose reference hash comes from a Pillow bug; we follow the format's specification.
    static let frameDifferences: [String: (frames: Set<Int>, why: String)] = [
        "pillow/apng_dispose_op_previous.png": ([3], "Pillow's frame-by-frame seek restores the frame it just drew for "
            + "APNG_DISPOSE_OP_PREVIOUS; the spec (and Pillow's own test seeking straight to the end) give green"),
        "pillow/dispose_bgnd.gif": ([2, 3, 4], "disposal 2 without a transparent index: Pillow paints the background "
            + "colour, browsers clear to transparent (GIFCoderTests.disposeToBackgroundClearsToTransparent)"),
        "pillow/test_extents.gif": ([1], "frame outside the screen: Pillow grows the canvas to 150x150, browsers clip "
            + "to the 100x100 screen (GIFCoderTests.framesOutsideTheScreenAreClipped)"),
        "pillow/test_extents_transparency.gif": ([1], "frame outside the screen: Pillow grows the canvas to 150x150, "
            + "browsers clip to the 100x100 screen (GIFCoderTests.framesOutsideTheScreenAreClipped)"),
    ]

    /// expected.json parsed: the parameterised test below has a case per file (an empty list would be skipped).
    @Test(.requires(.corpus)) func corpusHasItsFiles() {
        #expect(Corpus.expected.count > 200)
    }

    @Test(.requires(.corpus), arguments: Corpus.allFiles)
    func fileHasDocumentedOutcome(_ path: String) throws {
        let entry = try #require(Corpus.expected[path])
        let data = try Corpus.data(path)
        let outcome = Outcome(entry: entry)
        // The references are unmanaged decodes (Pillow, libjpeg, libpng ignore gAMA/iCCP): compare pixels as
        // decoded. Colour management has its own tests (ColorManagementTests) against lcms2 references.
        let result = Result { try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal)) }

        switch (outcome, result) {
        case (.error, .success) where Self.documentedDifferences[path] != nil:
            break
        case (.error, .success(let image)):
            Issue.record("\(path): expected an error (\(entry.expected)), decoded \(image.width)x\(image.height)")
        case (.tooLarge, .success), (.tooLarge, .failure):
            guard case .failure(let error) = result, case .tooLarge = error as? ImageDecodingError else {
                Issue.record("\(path): expected .tooLarge, got \(result)")
                return
            }
        case (.tooLargeOrDecode, .failure(let error)):
            guard case .tooLarge = error as? ImageDecodingError else {
                Issue.record("\(path): expected .tooLarge or a decode, got \(error)")
                return
            }
        case (_, .failure(let error)):
            #expect(isTypedDecodingError(error), "\(path): untyped error \(error)")
            if outcome == .decode { Issue.record("\(path): expected to decode (\(entry.expected)), got \(error)") }
            if outcome == .partial, error as? ImageDecodingError != .truncated {
                Issue.record("\(path): a truncated file must give a partial image or .truncated, got \(error)")
            }
        case (.partial, .success(let image)), (.errorOrPartial, .success(let image)):
            #expect(image.isIncomplete, "\(path): a truncated file's image must be marked incomplete")
        case (.decode, .success(let image)):
            try checkPixels(image, entry: entry, path: path)
        case (_, .success(let image)):
            #expect(image.width > 0 && image.height > 0 && image.pixels.count == image.width * image.height * 4)
        }
    }

    private func checkPixels(_ decoded: DecodedImage, entry: Corpus.Entry, path: String) throws {
        // Pillow transposes TIFFs by their Orientation tag while loading (other formats it leaves as stored);
        // the coders report orientation instead, so compare the TIFF as displayed.
        let image = entry.format == "tiff" ? TIFFCoderTests.applying(decoded.orientation, to: decoded) : decoded
        #expect(image.pixels.count == image.width * image.height * 4, "\(path): pixel buffer size")
        if let w = entry.width, let h = entry.height {
            #expect(image.width == w && image.height == h, "\(path): \(image.width)x\(image.height), expected \(w)x\(h)")
        }
        #expect(!image.isIncomplete, "\(path): a complete file decoded as incomplete")
        if let orientation = entry.probe_exif_orientation {
            #expect(decoded.orientation.rawValue == max(orientation, 1), "\(path): orientation \(decoded.orientation)")
        }
        if let expectedFrames = entry.frames, expectedFrames > 1 {
            let frames = try image.animationFrames()
            #expect(frames.count == expectedFrames, "\(path): \(frames.count) frames, expected \(expectedFrames)")
            let exempt = Self.frameDifferences[path]?.frames ?? []
            for (index, (frame, reference)) in zip(frames, entry.frames_rgba ?? []).enumerated() where !exempt.contains(index) {
                #expect(SHA256.hex(frame.pixels) == reference.sha256, "\(path): frame \(index) differs from the reference")
            }
        }
        let tolerant = entry.compare.hasPrefix("tolerance") || entry.expected.contains("tolerance")
        if tolerant {
            let reference = try #require(entry.thumb16_rgba_b64.flatMap { Data(base64Encoded: $0) }, "\(path): no thumb16")
            let mae = PixelComparison.meanAbsoluteError(PixelComparison.thumb16(image), Array(reference))
            #expect(mae <= 2, "\(path): thumb16 MAE \(mae)")
        } else if let reference = entry.referenceSHA256, image.width == entry.width ?? image.width {
            #expect(SHA256.hex(image.pixels) == reference, "\(path): RGBA hash differs from the reference")
        }
    }
}

import Foundation
import Testing
@testable import Decoding

/// PNG/APNG coder against the shared corpus: documented outcome and exact RGBA hash per file, chunked
/// feeding, partial images, hostile input, encoding. The coder is used directly, so other registered
/// coders cannot interfere.
@Suite struct PNGCoderTests {
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

    @Test(.enabled(if: Corpus.isAvailable)) func corpusHasThePNGFiles() {
        #expect(Self.pngFiles.count >= 120)
    }

    @Test(.enabled(if: Corpus.isAvailable), arguments: pngFiles)
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
                #expect(image.frames.count == (entry.frames ?? frames.count), "\(path) frame count")
                for (i, expected) in frames.enumerated() where i < image.frames.count {
                    let hash = Self.frameHashExceptions["\(path)#\(i)"] ?? expected.sha256
                    #expect(SHA256.hex(image.frames[i].pixels) == hash, "\(path) frame \(i)")
                    if let ms = expected.duration_ms {
                        #expect(abs(image.frames[i].duration * 1000 - ms) < 0.5, "\(path) frame \(i) duration")
                    }
                }
                #expect(image.frames.first?.pixels == image.pixels, "pixels are the first frame")
                #expect(image.loopCount == entry.loop ?? 0, "\(path) loop count")
            } else if (entry.frames ?? 1) <= 1 {
                #expect(image.frames.isEmpty, "\(path) is a still image")
            }
        }
    }
}

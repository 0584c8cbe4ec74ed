import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// WebP through libwebp (dlopen): corpus hashes, animation frames, incremental decoding, hostile input,
/// and the behaviour without the library.
@Suite(.serialized, .offThePool) struct WebPCoderTests {
    let coder = WebPCoder()

    @Test(.requires(.corpus, .libwebp))
    func everyCorpusWebPMatchesItsReference() throws {
        let files = Corpus.files(format: "webp")
        #expect(files.count >= 10)
        for path in files {
            let entry = try #require(Corpus.expected[path])
            let image = try coder.decode(try Corpus.data(path), options: ImageDecodingOptions())
            #expect(image.width == entry.width, "\(path)")
            #expect(image.height == entry.height, "\(path)")
            #expect(SHA256.hex(image.pixels) == entry.sha256_rgba, "\(path)")
            #expect(!image.isIncomplete, "\(path)")
            #expect(image.format == .webp)
            if let expectedFrames = entry.frames_rgba, expectedFrames.count > 1 {
                let frames = try image.animationFrames()
                #expect(frames.count == expectedFrames.count && image.frameCount == expectedFrames.count, "\(path)")
                for (index, (frame, expected)) in zip(frames, expectedFrames).enumerated() {
                    #expect(SHA256.hex(frame.pixels) == expected.sha256, "\(path) frame \(index)")
                    let ms = expected.duration_ms ?? 0
                    #expect(abs(frame.duration - (ms < 20 ? 0.1 : ms / 1000)) < 1e-9, "\(path) frame \(index)")
                }
                #expect(image.loopCount == entry.loop ?? 0, "\(path)")
            } else {
                #expect((try image.animationFrames()).isEmpty, "\(path)")
            }
        }
    }

    @Test(.requires(.corpus, .libwebp))
    func exifOrientationIsReportedNotApplied() throws {
        let image = try coder.decode(try Corpus.data("pillow/hopper_orientation_6.webp"), options: ImageDecodingOptions())
        #expect(image.orientation == .right)
        #expect(SHA256.hex(image.pixels) == Corpus.expected["pillow/hopper_orientation_6.webp"]?.sha256_rgba)
        let plain = try coder.decode(try Corpus.data("pillow/hopper.webp"), options: ImageDecodingOptions())
        #expect(plain.orientation == .up)
    }

    @Test(.requires(.corpus, .libwebp))
    func firstFrameOnlyGivesAStillImage() throws {
        var options = ImageDecodingOptions()
        options.decodeFirstFrameOnly = true
        let image = try coder.decode(try Corpus.data("pillow/iss634.webp"), options: options)
        #expect((try image.animationFrames()).isEmpty)
        #expect(SHA256.hex(image.pixels) == Corpus.expected["pillow/iss634.webp"]?.sha256_rgba)
    }

    @Test(.requires(.corpus, .libwebp))
    func randomChunkingGivesIdenticalPixels() throws {
        var rng = SeededRandom(seed: 0x5EB9)
        for path in Corpus.files(format: "webp") {
            let data = try Corpus.data(path)
            let oneShot = try coder.decode(data, options: ImageDecodingOptions())
            for round in 0..<3 {
                let decoder = coder.makeIncrementalDecoder(options: ImageDecodingOptions())
                var offset = 0
                while offset < data.count {
                    let limit = round == 0 ? 64 : 65536
                    let size = min(data.count - offset, 1 + Int(rng.next() % UInt64(limit)))
                    try decoder.append(data.subdata(in: offset..<offset + size), isFinal: offset + size == data.count)
                    offset += size
                    if offset < data.count { _ = decoder.currentImage() }
                }
                let final = try #require(decoder.currentImage(), "\(path)")
                #expect(final == oneShot, "\(path) round \(round)")
            }
        }
    }

    @Test(.requires(.corpus, .libwebp))
    func partialRowsAppearBeforeTheEnd() throws {
        let data = try Corpus.data("sdwebimage/TestImageStatic.webp")
        let decoder = coder.makeIncrementalDecoder(options: ImageDecodingOptions())
        var partials = 0
        for start in stride(from: 0, to: data.count, by: 4096) {
            let end = min(data.count, start + 4096)
            try decoder.append(data.subdata(in: start..<end), isFinal: end == data.count)
            if end < data.count, let partial = decoder.currentImage() {
                #expect(partial.isIncomplete)
                #expect(partial.width == 550 && partial.height == 368)
                partials += 1
            }
        }
        #expect(partials >= 3)
        #expect(decoder.currentImage()?.isIncomplete == false)
    }

    @Test(.requires(.corpus, .libwebp))
    func animationPreviewShowsTheFirstFrame() throws {
        let data = try Corpus.data("pillow/iss634.webp")
        let decoder = coder.makeIncrementalDecoder(options: ImageDecodingOptions())
        try decoder.append(data.prefix(data.count / 2), isFinal: false)
        let preview = try #require(decoder.currentImage())
        #expect(preview.isIncomplete)
        #expect(SHA256.hex(preview.pixels) == Corpus.expected["pillow/iss634.webp"]?.sha256_rgba)
        try decoder.append(data.suffix(from: data.count / 2), isFinal: true)
        #expect((try decoder.currentImage()?.animationFrames().count) == 42)
    }

    @Test(.requires(.corpus, .libwebp))
    func truncatedFilesGivePartialImagesOrTruncated() throws {
        let still = try Corpus.data("sdwebimage/TestImageStatic.webp")
        let half = try coder.decode(still.prefix(still.count / 2), options: ImageDecodingOptions())
        #expect(half.isIncomplete)
        #expect(half.width == 550 && half.height == 368)
        #expect(throws: ImageDecodingError.truncated) { try coder.decode(still.prefix(40), options: ImageDecodingOptions()) }
        #expect(throws: ImageDecodingError.truncated) { try coder.decode(still.prefix(8), options: ImageDecodingOptions()) }

        let animated = try Corpus.data("sdwebimage/TestAnimatedImageMemory.webp")
        let cut = try coder.decode(animated.prefix(animated.count / 2), options: ImageDecodingOptions())
        #expect(cut.isIncomplete)
        #expect(try cut.animationFrames().count == cut.frameCount && cut.frameCount > 1 && cut.frameCount < 16)
        // Every truncation point: no crash, and incremental agrees with one-shot.
        for length in stride(from: 0, to: still.count, by: 997) {
            let prefix = still.prefix(length)
            let oneShot = Result { try coder.decode(prefix, options: ImageDecodingOptions()) }
            let decoder = coder.makeIncrementalDecoder(options: ImageDecodingOptions())
            let chunked = Result { () throws -> DecodedImage? in
                try decoder.append(prefix, isFinal: true)
                return decoder.currentImage()
            }
            switch (oneShot, chunked) {
            case (.success(let a), .success(let b)): #expect(a == b, "length \(length)")
            case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)", "length \(length)")
            default: Issue.record("one-shot and incremental disagree at length \(length)")
            }
        }
    }

    @Test(.requires(.corpus, .libwebp))
    func bitFlipsGiveTypedErrorsOrImages() throws {
        var rng = SeededRandom(seed: 77)
        for path in ["pillow/transparent.webp", "pillow/iss634.webp", "sdwebimage/TestImageAnimated.webp", "libwebp/test.webp"] {
            // The 12-byte RIFF/WEBP header stays intact: every copy is still a WebP.
            expectBitFlippedCopiesDecodeOrThrowTyped(try Corpus.data(path), with: coder, copies: 60, bitsPerCopy: 4,
                                                     keepingFirst: 12, using: &rng, path)
        }
    }

    @Test(.requires(.libwebp))
    func hugeCanvasIsRejectedBeforeDecoding() throws {
        // VP8X 16383x16383 canvas, animated, one ANMF holding a 1x1 lossless frame.
        let vp8l: [UInt8] = [0x2F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]  // header only: never reached
        var anmf: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0]
        anmf += Array("VP8L".utf8) + le32(vp8l.count) + vp8l + [0]
        var body: [UInt8] = Array("WEBP".utf8)
        body += Array("VP8X".utf8) + le32(10) + [0x12, 0, 0, 0, 0xFE, 0x3F, 0x00, 0xFE, 0x3F, 0x00]
        body += Array("ANIM".utf8) + le32(6) + [0, 0, 0, 0, 0, 0]
        body += Array("ANMF".utf8) + le32(anmf.count) + anmf
        let file = Data(Array("RIFF".utf8) + le32(body.count) + body)
        #expect(throws: ImageDecodingError.tooLarge(width: 16383, height: 16383)) {
            try coder.decode(file, options: ImageDecodingOptions())
        }
        let decoder = coder.makeIncrementalDecoder(options: ImageDecodingOptions())
        #expect(throws: ImageDecodingError.tooLarge(width: 16383, height: 16383)) { try decoder.append(file, isFinal: true) }
        #expect(throws: ImageDecodingError.self) { try coder.decode(Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), options: ImageDecodingOptions()) }
    }

    @Test(.requires(.corpus, .libwebp))
    func malformedAnimationsGiveCorruptErrors() throws {
        let original = [UInt8](try Corpus.data("pillow/iss634.webp"))
        let anmf = try #require((12..<original.count - 4).first { original[$0..<$0 + 4].elementsEqual("ANMF".utf8) })

        var outside = original
        outside[anmf + 8] = 0xFF  // x offset (stored /2) far beyond the 245-pixel canvas
        outside[anmf + 9] = 0x7F
        let error = #expect(throws: ImageDecodingError.self) { try coder.decode(Data(outside), options: ImageDecodingOptions()) }
        if case .corrupt = error {} else { Issue.record("expected .corrupt, got \(String(describing: error))") }

        // Only the header chunks: an animation without frames.
        let noFrames = Array(original[0..<anmf])
        var resized = noFrames
        resized.replaceSubrange(4..<8, with: le32(noFrames.count - 8))
        #expect(throws: ImageDecodingError.corrupt("animated WebP without frames")) {
            try coder.decode(Data(resized), options: ImageDecodingOptions())
        }
        // Cut inside the first frame: nothing decodable yet.
        #expect(throws: ImageDecodingError.truncated) { try coder.decode(Data(original[0..<anmf + 100]), options: ImageDecodingOptions()) }
    }

    @Test(.requires(.corpus, .libwebp))
    func thePixelLimitGuardsOneCanvasNotTheFrames() throws {
        let data = try Corpus.data("pillow/iss634.webp")
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 245 * 245  // one canvas; the 42 frames are composited on demand
        let image = try coder.decode(data, options: options)
        #expect(try image.animationFrames().count == 42 && image.frameCount == 42)
        options.maximumPixelCount = 245 * 245 - 1
        #expect(throws: ImageDecodingError.tooLarge(width: 245, height: 245)) { try coder.decode(data, options: options) }
    }

    @Test(.requires(.corpus, .libwebp))
    func stillImageSizeIsCheckedAgainstTheLimit() throws {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 1000
        let data = try Corpus.data("sdwebimage/TestImageStatic.webp")
        #expect(throws: ImageDecodingError.tooLarge(width: 550, height: 368)) { try coder.decode(data, options: options) }
        let decoder = coder.makeIncrementalDecoder(options: options)
        #expect(throws: ImageDecodingError.tooLarge(width: 550, height: 368)) { try decoder.append(data.prefix(100), isFinal: false) }
    }

    @Test func missingLibraryGivesUnsupportedFormat() throws {
        let missing = WebPCoder(soname: "libwebp-not-installed.so.99")
        #expect(missing.unavailableReason?.contains("libwebp-not-installed.so.99") == true)
        #expect(missing.libraryVersion == nil)
        let header = Data("RIFF\u{24}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)
        #expect(missing.canDecode(header))
        #expect(!missing.canIncrementallyDecode(header))
        #expect(throws: ImageDecodingError.unsupportedFormat) { try missing.decode(header, options: ImageDecodingOptions()) }
        let decoder = missing.makeIncrementalDecoder(options: ImageDecodingOptions())
        #expect(throws: ImageDecodingError.unsupportedFormat) { try decoder.append(header, isFinal: true) }
    }

    @Test(.requires(.corpus, .libwebp))
    func managerUsesTheCoderForBothPaths() throws {
        let manager = ImageCodersManager(coders: [WebPCoder()])
        let data = try Corpus.data("pillow/transparent.webp")
        let image = try manager.decode(data)
        #expect(SHA256.hex(image.pixels) == Corpus.expected["pillow/transparent.webp"]?.sha256_rgba)
        let incremental = try #require(manager.incrementalDecoder(for: data.prefix(32), options: ImageDecodingOptions()))
        try incremental.append(data, isFinal: true)
        #expect(incremental.currentImage() == image)
    }

    private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> ($0 * 8)) & 0xFF) } }
}

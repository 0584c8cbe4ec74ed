import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// The PNG incremental decoder: identical results for any chunking, partial images while loading.
@Suite(.serialized, .offThePool) struct PNGIncrementalDecoderTests {
    let coder = PNGCoder()

    /// Feeds `data` in pieces of the given sizes (cycled), the last one final. Returns the final image or
    /// the first error, and every partial image seen along the way.
    static func feed(_ data: Data, sizes: [Int], options: ImageDecodingOptions = ImageDecodingOptions(),
                     collectPartials: Bool = false) -> (Result<DecodedImage, ImageDecodingError>, [DecodedImage]) {
        let decoder = PNGCoder().makeIncrementalDecoder(options: options)
        var partials: [DecodedImage] = []
        var offset = data.startIndex
        var step = 0
        while true {
            let size = max(1, sizes[step % sizes.count])
            step += 1
            let end = min(data.endIndex, offset + size)
            let isFinal = end == data.endIndex
            do {
                try decoder.append(data.subdata(in: offset..<end), isFinal: isFinal)
            } catch {
                return (.failure(error as? ImageDecodingError ?? .corrupt("\(error)")), partials)
            }
            offset = end
            if isFinal { break }
            if collectPartials, let image = decoder.currentImage() { partials.append(image) }
        }
        guard let image = decoder.currentImage() else { return (.failure(.truncated), partials) }
        return (.success(image), partials)
    }

    /// Random chunk sizes from 1 byte to 64 KB, spread evenly over orders of magnitude.
    static func randomSizes(count: Int, seed: UInt64) -> [Int] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { _ in Int(pow(2.0, Double.random(in: 0...16, using: &rng))) }
    }

    @Test(.requires(.corpus), arguments: Corpus.files(format: "png"))
    func randomChunkingGivesTheOneShotResult(_ path: String) throws {
        let data = try Corpus.data(path)
        let oneShot = Result { try coder.decode(data, options: ImageDecodingOptions()) }
        for seed in 1...3 as ClosedRange<UInt64> {
            let (chunked, _) = Self.feed(data, sizes: Self.randomSizes(count: 64, seed: seed &* 7919 &+ UInt64(data.count)))
            switch (oneShot, chunked) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(path) seed \(seed): chunked image differs")
            case (.failure(let a), .failure(let b)):
                #expect(a as? ImageDecodingError == b, "\(path) seed \(seed)")
            default:
                Issue.record("\(path) seed \(seed): one-shot \(oneShot) vs chunked \(chunked)")
            }
        }
    }

    @Test(.requires(.corpus), arguments: [
        "pngsuite/basn3p02.png", "pngsuite/ibasn6a16.png", "pillow/apng_dispose_op_previous.png",
        "libpng-testpngs/badadler.png", "generated/png_exif_orientation_6.png", "pillow/png_decompression_dos.png",
    ])
    func oneByteChunksGiveTheOneShotResult(_ path: String) throws {
        let data = try Corpus.data(path)
        let oneShot = try coder.decode(data, options: ImageDecodingOptions())
        let (chunked, _) = Self.feed(data, sizes: [1])
        #expect(try chunked.get() == oneShot)
    }

    @Test(.requires(.corpus))
    func adam7ShowsCoarseFullFramesBeforeTheEnd() throws {
        let data = try Corpus.data("generated/photo_adam7.png")
        let (result, partials) = Self.feed(data, sizes: [16 * 1024], collectPartials: true)
        let final = try result.get()
        #expect(!final.isIncomplete)
        #expect(partials.allSatisfy { $0.isIncomplete && $0.width == 640 && $0.height == 480 })
        // After the first pass libpng's progressive display fills every 8x8 block: the whole frame is
        // covered (opaque) long before the last byte, yet differs from the final pixels.
        let coarse = partials.filter { image in stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 255 } }
        #expect(!coarse.isEmpty, "a fully covered partial frame appears before the end")
        #expect(coarse.first?.pixels != final.pixels)
        // Later partial images get closer to the final one.
        if let first = coarse.first, let last = coarse.last, first.pixels != last.pixels {
            #expect(Self.difference(last.pixels, final.pixels) < Self.difference(first.pixels, final.pixels))
        }
    }

    @Test(.requires(.corpus))
    func nonInterlacedShowsTheRowsDecodedSoFar() throws {
        // A non-interlaced opaque photo: re-encode the Adam7 one with the PNG encoder.
        let photo = try coder.decode(try Corpus.data("generated/photo_adam7.png"), options: ImageDecodingOptions())
        let data = try coder.encode(photo, format: .png, quality: 1)
        let (result, partials) = Self.feed(data, sizes: [16 * 1024], collectPartials: true)
        #expect(try result.get().pixels == photo.pixels)
        #expect(partials.count >= 2)
        var previousRows = 0
        for image in partials {
            #expect(image.isIncomplete)
            let rows = Self.opaqueTopRows(image)
            #expect(rows >= previousRows, "rows only ever get added")
            #expect(rows < image.height)
            // Rows decoded so far are final; the rest is transparent.
            let rowBytes = image.width * 4
            #expect(image.pixels[0..<rows * rowBytes] == photo.pixels[0..<rows * rowBytes])
            #expect(image.pixels[rows * rowBytes..<image.pixels.count].allSatisfy { $0 == 0 } || rows == 0)
            previousRows = rows
        }
        #expect(previousRows > 0)
    }

    @Test(.requires(.corpus))
    func noImageBeforeAnyRowAndHeaderErrorsAtOnce() throws {
        let data = try Corpus.data("generated/photo_adam7.png")
        let decoder = coder.makeIncrementalDecoder(options: ImageDecodingOptions())
        try decoder.append(data.prefix(40), isFinal: false)
        #expect(decoder.currentImage() == nil)

        // A bomb fails on the append that completes its header: nothing is inflated or allocated.
        let bomb = try Corpus.data("generated/bomb_png_30000x30000_1bit.png")
        let bombDecoder = coder.makeIncrementalDecoder(options: ImageDecodingOptions())
        #expect(throws: ImageDecodingError.tooLarge(width: 30000, height: 30000)) {
            try bombDecoder.append(bomb.prefix(33), isFinal: false)
        }
        // The decoder stays failed.
        #expect(throws: ImageDecodingError.tooLarge(width: 30000, height: 30000)) {
            try bombDecoder.append(bomb.dropFirst(33), isFinal: true)
        }
        #expect(bombDecoder.currentImage() == nil)
    }

    @Test(.requires(.corpus))
    func managerHandsOutThePNGDecoderAndFinishesIdentically() throws {
        let manager = ImageCodersManager(coders: [PNGCoder()])
        let data = try Corpus.data("sdwebimage/TestImageLarge.png")
        let decoder = try #require(manager.incrementalDecoder(for: data.prefix(16), options: ImageDecodingOptions()))
        try decoder.append(data, isFinal: true)
        #expect(decoder.currentImage() == (try manager.decode(data)))
        #expect(BuiltInCoders.all().contains { $0 is PNGCoder })
    }

    static func opaqueTopRows(_ image: DecodedImage) -> Int {
        var rows = 0
        for y in 0..<image.height {
            let alpha = image.pixels[(y * image.width) * 4 + 3]
            guard alpha == 255 else { break }
            rows += 1
        }
        return rows
    }

    static func difference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
    }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Feeding a file through the incremental decoder in random pieces ends in exactly the one-shot result.
@Suite(.serialized, .offThePool) struct IncrementalConformanceTests {
    /// Feeds `data` in chunks of random size (log-uniform, 1 byte ... 64 KB), asking for the current image
    /// now and then as a progressive download would. Returns the final image or the error thrown.
    static func decodeInChunks(
        _ data: Data, seed: UInt64, previews: Int = 6, options: ImageDecodingOptions = ImageDecodingOptions(),
        onPartial: (DecodedImage) -> Void = { _ in }
    ) -> Result<DecodedImage, any Error> {
        var random = SeededRandom(seed: seed)
        guard let decoder = ImageCodersManager.shared.incrementalDecoder(for: data.prefix(64), options: options) else {
            return .failure(ImageDecodingError.unsupportedFormat)
        }
        // Ask for previews at a few byte positions rather than after every chunk: the downloader throttles by time.
        let previewPoints = Set((0..<previews).map { _ in Int.random(in: 0..<max(data.count, 1), using: &random) / 4096 })
        var offset = data.startIndex
        var bucket = -1
        do {
            while offset < data.endIndex {
                let size = min(data.endIndex - offset, Int(exp2(Double.random(in: 0...16, using: &random))))
                let end = offset + max(1, size)
                try decoder.append(data.subdata(in: offset..<end), isFinal: end == data.endIndex)
                offset = end
                if end < data.endIndex, offset / 4096 != bucket, previewPoints.contains(offset / 4096) {
                    bucket = offset / 4096
                    if let partial = decoder.currentImage() { onPartial(partial) }
                }
            }
            if data.isEmpty { try decoder.append(Data(), isFinal: true) }
        } catch {
            return .failure(error)
        }
        guard let image = decoder.currentImage() else { return .failure(ImageDecodingError.truncated) }
        return .success(image)
    }

    @Test(.requires(.corpus), arguments: Corpus.allFiles)
    func chunkedEqualsOneShot(_ path: String) throws {
        let data = try Corpus.data(path)
        let options = ImageDecodingOptions(maximumPixelCount: 40_000_000)
        let oneShot = Result { try ImageCodersManager.shared.decode(data, options: options) }
        for round in 0..<2 {
            let chunked = Self.decodeInChunks(data, seed: stableSeed(path) &+ UInt64(round), options: options)
            switch (oneShot, chunked) {
            case (.success(let a), .success(let b)):
                #expect(a.width == b.width && a.height == b.height, "\(path): size differs")
                #expect(a.pixels == b.pixels, "\(path): chunked pixels differ from one-shot (round \(round))")
                #expect((try a.animationFrames()) == (try b.animationFrames()), "\(path): chunked frames differ from one-shot")
                #expect(a.isIncomplete == b.isIncomplete && a.orientation == b.orientation && a.loopCount == b.loopCount,
                        "\(path): metadata differs")
            case (.failure(let a), .failure(let b)):
                #expect(isTypedDecodingError(a) && isTypedDecodingError(b), "\(path): untyped errors \(a) / \(b)")
            case (.success, .failure(let error)):
                // No incremental decoder for an unrecognised prefix is the only allowed difference… and it isn't one here.
                Issue.record("\(path): one-shot decoded, chunked failed with \(error)")
            case (.failure(let error), .success):
                Issue.record("\(path): one-shot failed with \(error), chunked decoded")
            }
        }
    }

    /// Progressive JPEG, Adam7 PNG and baseline JPEG show something before their last byte.
    @Test(.requires(.corpus), arguments: [
        "generated/photo_progressive.jpg", "generated/photo_adam7.png", "generated/photo_444.jpg",
    ])
    func partialImagesAppearBeforeTheEnd(_ path: String) throws {
        let data = try Corpus.data(path)
        let decoder = try #require(ImageCodersManager.shared.incrementalDecoder(for: data, options: ImageDecodingOptions()))
        var partials = 0
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + 4096)
            try decoder.append(data.subdata(in: offset..<end), isFinal: end == data.count)
            offset = end
            if end < data.count, let image = decoder.currentImage() {
                #expect(image.isIncomplete, "\(path): a partial image must be marked incomplete")
                #expect(image.pixels.count == image.width * image.height * 4)
                partials += 1
            }
        }
        #expect(partials > 0, "\(path): no partial image before the end")
        let final = try #require(decoder.currentImage())
        #expect(!final.isIncomplete)
        #expect(final.pixels == (try ImageCodersManager.shared.decode(data)).pixels)
    }
}

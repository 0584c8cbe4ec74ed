import Decoding
import Foundation
import TestRequirements
import Testing

/// Frames composited on demand (`DecodedImage.animation`) equal the frames an eager decode composites
/// (`.preloadAllFrames`), in sequential, backward and random order, for every animated file of the corpus
/// and for generated GIF, APNG and WebP animations that exercise every disposal and blend rule. The eager
/// frames themselves are checked against the corpus' reference hashes by the coders' own suites.
@Suite(.serialized, .offThePool) struct AnimationOnDemandTests {
    /// The corpus' animations of the formats composited here (GIF, APNG, WebP).
    static let animatedCorpusFiles: [String] = Corpus.expected
        .filter { ["gif", "png", "webp"].contains($0.value.format) && ($0.value.frames ?? 1) > 1 && !$0.value.expected.hasPrefix("reject") }
        .keys.sorted()
        .filter { !$0.hasSuffix(".webp") || Requirement.shouldRun(.libwebp) }

    @Test(.requires(.corpus), arguments: animatedCorpusFiles)
    func corpusAnimationOnDemandEqualsEager(_ path: String) throws {
        try Self.expectOnDemandEqualsEager(try Corpus.data(path), label: path)
    }

    @Test(arguments: 0..<8)
    func generatedGIFOnDemandEqualsEager(seed: Int) throws {
        try Self.expectOnDemandEqualsEager(AnimationBuilders.randomGIF(seed: UInt64(seed)), label: "GIF seed \(seed)")
    }

    @Test(arguments: 0..<6)
    func generatedAPNGOnDemandEqualsEager(seed: Int) throws {
        try Self.expectOnDemandEqualsEager(try AnimationBuilders.randomAPNG(seed: UInt64(seed)), label: "APNG seed \(seed)")
    }

    @Test(.requires(.libwebp), arguments: 0..<6)
    func generatedWebPOnDemandEqualsEager(seed: Int) throws {
        try Self.expectOnDemandEqualsEager(try AnimatedWebPBuilder.random(seed: UInt64(seed)), label: "WebP seed \(seed)")
    }

    /// Thumbnails: the scaling step applies to every frame composited later exactly as to the poster.
    @Test(.requires(.corpus), arguments: ["pillow/iss634.gif", "sdwebimage/TestImageAnimated.apng"])
    func thumbnailFramesOnDemandEqualEager(_ path: String) throws {
        var options = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 64, height: 64))
        try Self.expectOnDemandEqualsEager(try Corpus.data(path), label: path + " thumbnail", options: options)
        options.thumbnailPixelSize = nil
        options.scaleDownLimitBytes = 40_000
        try Self.expectOnDemandEqualsEager(try Corpus.data(path), label: path + " scaled down", options: options)
    }

    /// Transformers (here a crop, then rounded corners) run on each frame as it is composited.
    @Test func processingAppliesToFramesOnDemand() throws {
        let data = AnimationBuilders.randomGIF(seed: 42)
        let eager = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(preloadAllFrames: true))
        let onDemand = try ImageCodersManager.shared.decode(data)
        let rect = PixelRect(x: 2, y: 3, width: 15, height: 11)
        let a = try eager.cropped(to: rect).roundingCorners(radius: 4)
        let b = try onDemand.cropped(to: rect).roundingCorners(radius: 4)
        let animation = try #require(b.animation)
        #expect(a.frames.count == 12 && animation.frameCount == 12 && animation.width == 15 && animation.height == 11)
        for index in (0..<12).reversed() {
            #expect(try animation.frame(at: index) == a.frames[index].pixels, "frame \(index)")
        }
        #expect(try animation.frame(at: 0) == b.pixels, "frame 0 is the poster")
    }

    /// Many threads ask one animation for frames at once (run under TSan by CI): every answer is right.
    @Test func framesFromManyThreadsAtOnce() throws {
        let data = AnimationBuilders.randomGIF(seed: 7, width: 40, height: 30, frameCount: 24)
        let eager = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(preloadAllFrames: true)).frames
        let animation = try #require(try ImageCodersManager.shared.decode(data).animation)
        let mismatches = Mismatches()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var random = SeededRandom(seed: UInt64(worker))
            for _ in 0..<40 {
                let index = Int(random.next() % 24)
                if (try? animation.frame(at: index)) != eager[index].pixels { mismatches.add(index) }
            }
        }
        #expect(mismatches.all.isEmpty, "wrong frames: \(mismatches.all)")
    }

    @Test func outOfRangeFramesThrow() throws {
        let animation = try #require(try ImageCodersManager.shared.decode(AnimationBuilders.randomGIF(seed: 1)).animation)
        #expect(throws: ImageDecodingError.frameIndexOutOfRange(index: 12, frameCount: 12)) { try animation.frame(at: 12) }
        #expect(throws: ImageDecodingError.frameIndexOutOfRange(index: -1, frameCount: 12)) { try animation.frame(at: -1) }
        #expect(animation.duration(at: 12) == 0)
    }

    /// Compositing keeps one canvas and a few cached frames, never every frame.
    @Test func memoryCostCountsWhatTheAnimationHolds() throws {
        let data = AnimationBuilders.randomGIF(seed: 3, width: 100, height: 80, frameCount: 30)
        let image = try ImageCodersManager.shared.decode(data)
        let animation = try #require(image.animation)
        let canvas = 100 * 80 * 4
        #expect(image.memoryCost == canvas + animation.memoryCost && animation.memoryCost >= data.count)
        for index in 0..<30 { _ = try animation.frame(at: index) }
        // Compressed bytes and index, at most the cached frames, no kept canvas after the last frame.
        #expect(animation.memoryCost <= data.count + 30 * 200 + AnimatedImage.cachedFrameLimit * canvas)
        #expect(image.memoryCost < canvas * 6, "far below 30 canvases")
    }

    // MARK: - Helpers

    /// Eager frames (preloaded) against on-demand frames from fresh decodes: in order, backwards, and in a
    /// seeded random order with repeats; frame count, durations and loop count too.
    static func expectOnDemandEqualsEager(_ data: Data, label: String, options: ImageDecodingOptions = .init(),
                                          sourceLocation: SourceLocation = #_sourceLocation) throws {
        var eagerOptions = options
        eagerOptions.preloadAllFrames = true
        let eager = try ImageCodersManager.shared.decode(data, options: eagerOptions)
        let count = eager.frameCount
        try #require(count > 1 && eager.frames.count == count, "\(label): \(eager.frames.count) eager frames of \(count)",
                     sourceLocation: sourceLocation)
        #expect(eager.frames[0].pixels == eager.pixels, "\(label): the poster is frame 0", sourceLocation: sourceLocation)
        var random = SeededRandom(seed: stableSeed(label))
        let shuffled = (0..<count).shuffled(using: &random) + (0..<count).map { _ in Int(random.next() % UInt64(count)) }
        for (name, order) in [("sequential", Array(0..<count) + Array(0..<count)), ("backward", Array((0..<count).reversed())),
                              ("random", shuffled)] {
            let image = try ImageCodersManager.shared.decode(data, options: options)
            let animation = try #require(image.animation, "\(label): no animation", sourceLocation: sourceLocation)
            #expect(image.frames.isEmpty && image.pixels == eager.pixels && image.loopCount == eager.loopCount,
                    "\(label)", sourceLocation: sourceLocation)
            #expect(animation.frameCount == count && animation.width == eager.width && animation.height == eager.height,
                    "\(label)", sourceLocation: sourceLocation)
            for index in order {
                let frame = try animation.frame(at: index)
                #expect(frame == eager.frames[index].pixels, "\(label): \(name) frame \(index)", sourceLocation: sourceLocation)
                #expect(animation.duration(at: index) == eager.frames[index].duration, "\(label): duration \(index)",
                        sourceLocation: sourceLocation)
            }
        }
    }
}

/// Frame indices that came out wrong, collected from many threads.
final class Mismatches: @unchecked Sendable {  // `lock` guards `indices`
    private let lock = NSLock()
    private var indices: [Int] = []
    func add(_ index: Int) { lock.withLock { indices.append(index) } }
    var all: [Int] { lock.withLock { indices } }
}

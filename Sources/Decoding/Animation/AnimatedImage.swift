import Foundation

/// The frames of an animated image, composited on demand from the compressed bytes (SDWebImage's
/// `SDAnimatedImage`): a decode keeps only the first frame's pixels (`DecodedImage.pixels`, the poster) and
/// this object, which knows the frame count, durations and loop count from a cheap index pass and composites
/// any frame when asked, with the format's rules (GIF disposal and transparency, APNG blend and dispose
/// operations, WebP ANMF blending and disposal).
///
/// - Sequential playback costs one frame's work per frame: the canvas after the last composited frame is
///   kept, so frame n+1 continues from it.
/// - Random access resumes from the nearest kept canvas (that one, or the nearest earlier key frame: a frame
///   that does not depend on the ones before it).
/// - The last `cachedFrameLimit` frames handed out are cached.
/// - Compositing reserves its working memory against the decode memory budget the image was decoded with.
/// - Safe to call from many threads at once: compositing is serialised per animation, cache hits are not.
///
/// Frames have the image's size (`width`×`height`, after any thumbnail scaling) and are processed like
/// `pixels` (colour conversion, transformers), so frame 0 equals the poster.
public final class AnimatedImage: @unchecked Sendable, Equatable {  // `renderLock` guards `cursor`; `cacheLock` guards `cache` and `cursorBytes`
    /// How many composited frames each animation keeps for repeated requests.
    public static let cachedFrameLimit = 3

    /// Every frame of the animation.
    public let frameCount: Int
    /// How many times the animation plays: 0 means forever.
    public let loopCount: Int
    /// The size of every frame, in pixels.
    public let width: Int
    public let height: Int
    /// The container format of the image this animation belongs to (what `image(at:)` reports).
    let format: ImageFormat

    let source: any AnimationSource
    let pipeline: FramePipeline
    let budget: ImageDecodingBudget

    private let renderLock = NSLock()
    private var cursor: (any AnimationCompositor)?
    private let cacheLock = NSLock()
    private var cache: [(index: Int, pixels: [UInt8])] = []
    private var cursorBytes = 0

    init(source: any AnimationSource, pipeline: FramePipeline = FramePipeline(), width: Int? = nil, height: Int? = nil,
         budget: ImageDecodingBudget, format: ImageFormat = .undefined) {
        self.source = source
        self.format = format
        self.pipeline = pipeline
        self.budget = budget
        frameCount = source.frameCount
        loopCount = source.loopCount
        self.width = width ?? source.canvasWidth
        self.height = height ?? source.canvasHeight
    }

    /// Seconds frame `index` is shown (browser rule: a declared delay under 20 ms shows for 100 ms); 0 for an
    /// index out of range.
    public func duration(at index: Int) -> TimeInterval {
        guard index >= 0, index < frameCount else { return 0 }
        return source.duration(at: index)
    }

    /// One loop of the animation, in seconds, rounded to the millisecond (thirty frames of 0.1 s are 3.0 s, not
    /// the 3.0000000000000004 their floating-point sum is).
    public var totalDuration: TimeInterval {
        ((0..<frameCount).reduce(0) { $0 + source.duration(at: $1) } * 1000).rounded() / 1000
    }

    /// Frame `index` composited: RGBA8, straight alpha, `width`×`height`. Throws `.frameIndexOutOfRange` for an
    /// index out of range, `.corrupt` when that frame's data cannot be decoded, `.exceedsDecodingBudget` when
    /// compositing needs more than the whole budget.
    public func frame(at index: Int) throws -> [UInt8] {
        guard index >= 0, index < frameCount else {
            throw ImageDecodingError.frameIndexOutOfRange(index: index, frameCount: frameCount)
        }
        if let hit = cached(index) { return hit }
        return try renderLock.withLock {
            if let hit = cached(index) { return hit }
            let reservation = try reserveWorkingMemory()
            defer { reservation.release() }
            return try renderLocked(index, store: true)
        }
    }

    /// Bytes this animation holds beyond the poster: compressed data and index, the kept canvas, cached frames.
    public var memoryCost: Int {
        cacheLock.withLock { cursorBytes + cache.reduce(0) { $0 + $1.pixels.count } } + source.retainedBytes
    }

    /// Every frame in order, composited in one pass (`.preloadAllFrames`). The caller holds the budget for them.
    func allFrames() throws -> [ImageFrame] {
        try renderLock.withLock {
            let compositor = source.makeCompositor(startingAt: 0)
            var frames: [ImageFrame] = []
            frames.reserveCapacity(frameCount)
            while compositor.nextIndex < frameCount {
                let index = compositor.nextIndex
                guard let canvas = try compositor.advance(output: true) else { break }
                frames.append(ImageFrame(pixels: pipeline.apply(canvas), duration: source.duration(at: index)))
            }
            return frames
        }
    }

    /// The same frames with one more processing step after the current ones.
    func appending(_ step: FramePipeline.Step) -> AnimatedImage {
        AnimatedImage(source: source, pipeline: pipeline.appending(step), width: step.width, height: step.height, budget: budget,
                      format: format)
    }

    /// The same frames, belonging to an image of `format` (set once, when the image that owns it is made).
    func belonging(to format: ImageFormat) -> AnimatedImage {
        guard format != self.format else { return self }
        return AnimatedImage(source: source, pipeline: pipeline, width: width, height: height, budget: budget, format: format)
    }

    /// Bytes one composite needs while it runs: the source's working set, the canvas, and each step's output.
    var workingBytes: Int {
        let canvas = source.canvasWidth * source.canvasHeight * 4
        return pipeline.steps.reduce(source.workingBytes + canvas) { $0 + $1.width * $1.height * 4 }
    }

    public static func == (a: AnimatedImage, b: AnimatedImage) -> Bool {
        if a === b { return true }
        return a.frameCount == b.frameCount && a.loopCount == b.loopCount && a.width == b.width && a.height == b.height
            && a.pipeline.labels == b.pipeline.labels && a.source.hasSameContent(as: b.source)
    }

    // MARK: - Compositing

    private func reserveWorkingMemory() throws -> ImageDecodingBudget.Reservation {
        let bytes = workingBytes
        let limit = budget.limitBytes
        guard bytes <= limit else {
            throw ImageDecodingError.exceedsDecodingBudget(width: source.canvasWidth, height: source.canvasHeight,
                                                           bytes: bytes, budgetBytes: limit)
        }
        return try budget.reserve(bytes)
    }

    /// Under `renderLock`: composites `index` from the kept canvas when it is at or after the nearest key
    /// frame, else from that key frame.
    private func renderLocked(_ index: Int, store: Bool) throws -> [UInt8] {
        let key = source.keyFrame(atOrBefore: index)
        let compositor: any AnimationCompositor
        if let cursor, cursor.nextIndex <= index, cursor.nextIndex >= key {
            compositor = cursor
        } else {
            compositor = source.makeCompositor(startingAt: key)
        }
        // Dropped while compositing: a frame that fails leaves no half-drawn canvas behind.
        cursor = nil
        cacheLock.withLock { cursorBytes = 0 }
        while compositor.nextIndex < index { _ = try compositor.advance(output: false) }
        guard let canvas = try compositor.advance(output: true) else {
            throw ImageDecodingError.corrupt("frame \(index) could not be composited")
        }
        let pixels = pipeline.apply(canvas)
        if compositor.nextIndex < frameCount {
            cursor = compositor
            cacheLock.withLock { cursorBytes = compositor.retainedBytes }
        }
        if store { remember(index, pixels) }
        return pixels
    }

    private func cached(_ index: Int) -> [UInt8]? {
        cacheLock.withLock {
            guard let position = cache.firstIndex(where: { $0.index == index }) else { return nil }
            let entry = cache.remove(at: position)
            cache.append(entry)  // most recently used last
            return entry.pixels
        }
    }

    private func remember(_ index: Int, _ pixels: [UInt8]) {
        cacheLock.withLock {
            cache.removeAll { $0.index == index }
            cache.append((index, pixels))
            if cache.count > Self.cachedFrameLimit { cache.removeFirst(cache.count - Self.cachedFrameLimit) }
        }
    }
}

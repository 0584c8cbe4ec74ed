import Foundation

/// What a coder's cheap index pass learnt about an animation: enough to composite any frame later from the
/// compressed bytes it keeps. Immutable and shared between threads; `AnimatedImage` drives it.
protocol AnimationSource: Sendable {
    /// The canvas every frame is composited on, in pixels (before any scaling).
    var canvasWidth: Int { get }
    var canvasHeight: Int { get }
    var frameCount: Int { get }
    /// 0 means forever.
    var loopCount: Int { get }
    /// Seconds frame `index` is shown, the browser rule applied (under 20 ms means 100 ms).
    func duration(at index: Int) -> TimeInterval
    /// Bytes this source keeps alive: the compressed data and the index.
    var retainedBytes: Int { get }
    /// Bytes one compositor holds besides the canvas it hands out (for the decode memory budget).
    var workingBytes: Int { get }
    /// The latest frame at or before `index` whose composite does not depend on earlier frames (0 at worst).
    func keyFrame(atOrBefore index: Int) -> Int
    /// A compositor about to draw `keyFrame`, which must be a key frame.
    func makeCompositor(startingAt keyFrame: Int) -> any AnimationCompositor
    /// Whether `other` describes the same frames from the same bytes.
    func hasSameContent(as other: any AnimationSource) -> Bool
}

/// Composites the frames of one animation in order, keeping the canvas between frames: one frame's work per
/// frame. Used by one thread at a time (`AnimatedImage` serialises it).
protocol AnimationCompositor: AnyObject {
    /// The frame the next `advance` draws.
    var nextIndex: Int { get }
    /// Draws frame `nextIndex` and moves on. Returns the composited canvas (RGBA8, canvas size) when `output`
    /// is true; frames only passed through skip that copy.
    func advance(output: Bool) throws -> [UInt8]?
    /// Bytes held between frames (canvas, saved areas).
    var retainedBytes: Int { get }
}

/// An animation whose frames already exist as full canvases (a coder that composites eagerly, or frames a
/// caller built): "compositing" hands them out.
struct PrecomposedAnimation: AnimationSource {
    let frames: [ImageFrame]
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int

    var frameCount: Int { frames.count }
    func duration(at index: Int) -> TimeInterval { frames[index].duration }
    /// The frames are the image's own `frames`, counted there.
    var retainedBytes: Int { 0 }
    var workingBytes: Int { 0 }
    func keyFrame(atOrBefore index: Int) -> Int { index }
    func makeCompositor(startingAt keyFrame: Int) -> any AnimationCompositor { Compositor(frames: frames, next: keyFrame) }

    func hasSameContent(as other: any AnimationSource) -> Bool {
        guard let other = other as? PrecomposedAnimation else { return false }
        return frames == other.frames && canvasWidth == other.canvasWidth && canvasHeight == other.canvasHeight
    }

    private final class Compositor: AnimationCompositor {
        let frames: [ImageFrame]
        var nextIndex: Int

        init(frames: [ImageFrame], next: Int) {
            self.frames = frames
            nextIndex = next
        }

        func advance(output: Bool) throws -> [UInt8]? {
            defer { nextIndex += 1 }
            return output ? frames[nextIndex].pixels : nil
        }

        var retainedBytes: Int { 0 }
    }
}

import Foundation

/// An animated WebP's frames for `AnimatedImage`: the file's bytes and its ANMF frames with their placement,
/// composited on demand exactly as libwebp's WebPAnimDecoder does (`WebPAnimationCompositor`). Each frame is
/// decoded by libwebp straight into its rectangle of the canvas when it is drawn.
///
/// Key frames are libwebp's: compositing may start at any of them from a transparent canvas.
struct WebPAnimationFrames: AnimationSource {
    struct Frame: Sendable {
        let container: WebPContainer.Frame
        let placement: WebPAnimationCompositor.Placement
        let isKeyFrame: Bool
    }

    let lib: LibWebP
    let data: Data
    let frames: [Frame]
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int

    /// Indexes `container`'s frames: each frame's bitstream is located and its size read from its header
    /// (nothing is decoded). Throws `.corrupt` for a frame without a valid header or outside the canvas.
    init(lib: LibWebP, data: Data, container: WebPContainer, frames selected: [WebPContainer.Frame]) throws {
        self.lib = lib
        self.data = data
        canvasWidth = container.canvasWidth
        canvasHeight = container.canvasHeight
        loopCount = container.loopCount
        var indexed: [Frame] = []
        indexed.reserveCapacity(selected.count)
        var previous: WebPAnimationCompositor.Placement?
        var previousWasKey = false
        try data.withUnsafeBytes { bytes in
            for (index, frame) in selected.enumerated() {
                let placement = try Self.placement(of: frame, index: index, lib: lib, bytes: bytes,
                                                   canvasWidth: container.canvasWidth, canvasHeight: container.canvasHeight)
                let isKey = WebPAnimationCompositor.isKeyFrame(placement, previous: previous, previousWasKeyFrame: previousWasKey,
                                                               canvasWidth: container.canvasWidth, canvasHeight: container.canvasHeight)
                indexed.append(Frame(container: frame, placement: placement, isKeyFrame: isKey))
                previous = placement
                previousWasKey = isKey
            }
        }
        frames = indexed
    }

    private static func placement(
        of frame: WebPContainer.Frame, index: Int, lib: LibWebP, bytes: UnsafeRawBufferPointer, canvasWidth: Int, canvasHeight: Int
    ) throws -> WebPAnimationCompositor.Placement {
        let stream = try WebPContainer.bitstream(of: frame, in: bytes)
        let file = WebPContainer.standaloneFile(for: stream, in: bytes)
        var width: Int32 = 0, height: Int32 = 0
        guard file.withUnsafeBufferPointer({ lib.getInfo($0.baseAddress, $0.count, &width, &height) }) != 0 else {
            throw ImageDecodingError.corrupt("animation frame \(index) has no valid header")
        }
        let w = Int(width), h = Int(height)
        guard w > 0, h > 0, frame.x + w <= canvasWidth, frame.y + h <= canvasHeight else {
            throw ImageDecodingError.corrupt("animation frame \(index) (\(w)x\(h) at \(frame.x),\(frame.y)) outside the canvas")
        }
        return WebPAnimationCompositor.Placement(
            x: frame.x, y: frame.y, width: w, height: h, hasAlpha: stream.hasAlpha,
            blends: frame.blends, disposesToBackground: frame.disposesToBackground)
    }

    var frameCount: Int { frames.count }
    func duration(at index: Int) -> TimeInterval { WebPImageDecoding.duration(milliseconds: frames[index].container.durationMs) }
    var retainedBytes: Int { data.count + frames.count * MemoryLayout<Frame>.stride }
    /// The disposed previous canvas and one frame's standalone bitstream (at most the file).
    var workingBytes: Int { canvasWidth * canvasHeight * 4 }

    func keyFrame(atOrBefore index: Int) -> Int {
        var i = index
        while i > 0 && !frames[i].isKeyFrame { i -= 1 }
        return i
    }

    func makeCompositor(startingAt keyFrame: Int) -> any AnimationCompositor {
        Compositor(source: self, next: keyFrame)
    }

    func hasSameContent(as other: any AnimationSource) -> Bool {
        guard let other = other as? WebPAnimationFrames else { return false }
        return frames.count == other.frames.count && data == other.data
    }

    /// Draws the frames of one `WebPAnimationFrames` in order, keeping libwebp's compositing state.
    final class Compositor: AnimationCompositor {
        private let source: WebPAnimationFrames
        private(set) var nextIndex: Int
        private var state: WebPAnimationCompositor

        init(source: WebPAnimationFrames, next: Int) {
            self.source = source
            nextIndex = next
            state = WebPAnimationCompositor(canvasWidth: source.canvasWidth, canvasHeight: source.canvasHeight)
        }

        var retainedBytes: Int { source.canvasWidth * source.canvasHeight * 4 }

        func advance(output: Bool) throws -> [UInt8]? {
            let index = nextIndex
            nextIndex += 1
            let frame = source.frames[index]
            let lib = source.lib
            let file = try source.data.withUnsafeBytes { bytes in
                WebPContainer.standaloneFile(for: try WebPContainer.bitstream(of: frame.container, in: bytes), in: bytes)
            }
            // libwebp decodes the frame straight into its rectangle of the canvas, as WebPAnimDecoder does.
            let canvas = try state.add(at: frame.placement) { origin, available, stride in
                let result = file.withUnsafeBufferPointer { lib.decodeRGBAInto($0.baseAddress, $0.count, origin, available, Int32(stride)) }
                guard result != nil else { throw ImageDecodingError.corrupt("animation frame \(index) could not be decoded") }
            }
            return output ? canvas : nil
        }
    }
}

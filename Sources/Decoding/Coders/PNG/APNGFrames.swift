import Foundation

/// An APNG's frames for `AnimatedImage`: the frame controls and fdAT data the index pass collected, the
/// default image as decoded, composited on demand by the APNG rules: the canvas starts fully transparent,
/// dispose and blend operations apply per frame, "over" is straight-alpha source-over.
///
/// Key frames (compositing may start there with a transparent canvas): the first frame, a frame after one
/// that covers the canvas and is disposed to background, and a frame that covers the canvas with blend
/// "source" and is not disposed to previous.
struct APNGFrames: AnimationSource {
    let header: [UInt8]
    let palette: [UInt8]?
    let transparency: [UInt8]?
    let frames: [APNGAnimation.Frame]
    /// The IDAT image, RGBA8 canvas size, as libpng decoded it (before colour conversion or scaling).
    let defaultImage: [UInt8]
    let defaultImageIsFirstFrame: Bool
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    private let keys: [Int]

    init(header: [UInt8], palette: [UInt8]?, transparency: [UInt8]?, frames: [APNGAnimation.Frame], defaultImage: [UInt8],
         defaultImageIsFirstFrame: Bool, canvasWidth: Int, canvasHeight: Int, loopCount: Int) {
        self.header = header
        self.palette = palette
        self.transparency = transparency
        self.frames = frames
        self.defaultImage = defaultImage
        self.defaultImageIsFirstFrame = defaultImageIsFirstFrame
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.loopCount = loopCount
        var keys = [0]
        let controls = frames.map(\.control)
        let offset = defaultImageIsFirstFrame ? 0 : 1
        for (i, control) in controls.enumerated() where i + offset > 0 {
            let covers = control.coversCanvas(width: canvasWidth, height: canvasHeight)
            let previousClears = i > 0 && controls[i - 1].dispose == .background
                && controls[i - 1].coversCanvas(width: canvasWidth, height: canvasHeight)
            if i == 0 || previousClears || (covers && control.blend == .source && control.dispose != .previous) {
                keys.append(i + offset)
            }
        }
        self.keys = keys
    }

    var frameCount: Int { frames.count + (defaultImageIsFirstFrame ? 0 : 1) }

    func duration(at index: Int) -> TimeInterval {
        guard let control = control(at: index) else { return 0.1 }  // the default image outside the animation
        return control.duration
    }

    /// The frame control of frame `index`; nil for a default image that is not part of the animation.
    func control(at index: Int) -> APNGFrameControl? {
        let i = defaultImageIsFirstFrame ? index : index - 1
        return i >= 0 ? frames[i].control : nil
    }

    var retainedBytes: Int {
        frames.reduce(defaultImage.count + header.count) { total, frame in frame.data.reduce(total) { $0 + $1.count } }
    }

    /// The canvas, one decoded frame and the area disposal to previous saves: each at most the canvas.
    var workingBytes: Int { canvasWidth * canvasHeight * 4 * 3 }

    func keyFrame(atOrBefore index: Int) -> Int {
        keys.last(where: { $0 <= index }) ?? 0
    }

    func makeCompositor(startingAt keyFrame: Int) -> any AnimationCompositor {
        Compositor(frames: self, next: keyFrame)
    }

    func hasSameContent(as other: any AnimationSource) -> Bool {
        guard let other = other as? APNGFrames else { return false }
        return frames.count == other.frames.count && defaultImageIsFirstFrame == other.defaultImageIsFirstFrame
            && zip(frames, other.frames).allSatisfy { $0.control == $1.control && $0.data == $1.data }
            && defaultImage == other.defaultImage
    }

    /// Draws the frames of one `APNGFrames` in order on a kept canvas.
    final class Compositor: AnimationCompositor {
        private let source: APNGFrames
        private(set) var nextIndex: Int
        private var canvas: [UInt8]

        init(frames: APNGFrames, next: Int) {
            source = frames
            nextIndex = next
            canvas = [UInt8](repeating: 0, count: frames.canvasWidth * frames.canvasHeight * 4)
        }

        var retainedBytes: Int { canvas.count }

        func advance(output: Bool) throws -> [UInt8]? {
            let index = nextIndex
            nextIndex += 1
            let width = source.canvasWidth
            // Not part of the animation, yet reported first (see `APNGAnimation`): the canvas stays clear.
            guard var control = source.control(at: index) else { return output ? source.defaultImage : nil }
            let frameIndex = source.defaultImageIsFirstFrame ? index : index - 1
            let pixels: [UInt8]
            if frameIndex == 0 && source.defaultImageIsFirstFrame {
                pixels = source.defaultImage
            } else {
                guard let decoded = source.decode(source.frames[frameIndex]) else {
                    throw ImageDecodingError.corrupt("APNG frame \(index) could not be decoded")
                }
                pixels = decoded
            }
            if frameIndex == 0 {
                // Nothing to restore before the first frame; and on the fresh canvas the source is copied
                // as is (identical to "over" on transparent black, and keeps the colours of clear pixels).
                if control.dispose == .previous { control.dispose = .background }
                control.blend = .source
            }
            let saved = control.dispose == .previous ? APNGFrames.copyRect(canvas, width: width, control) : nil
            APNGFrames.draw(pixels, on: &canvas, width: width, control)
            let out = output ? canvas : nil
            switch control.dispose {
            case .none: break
            case .background: APNGFrames.clearRect(&canvas, width: width, control)
            case .previous: if let saved { APNGFrames.pasteRect(saved, on: &canvas, width: width, control) }
            }
            return out
        }
    }

    /// Decodes one frame's data as a standalone PNG of the frame's size.
    func decode(_ frame: APNGAnimation.Frame) -> [UInt8]? {
        guard header.count == 13, !frame.data.isEmpty else { return nil }
        let control = frame.control
        guard let decoder = PNGStreamDecoder(maximumPixelCount: control.width * control.height, trustedStream: true) else {
            return nil
        }
        decoder.prepareCanvas(width: control.width, height: control.height)
        var ihdr = header
        for (i, shift) in [24, 16, 8, 0].enumerated() {
            ihdr[i] = UInt8(truncatingIfNeeded: control.width >> shift)
            ihdr[4 + i] = UInt8(truncatingIfNeeded: control.height >> shift)
        }
        do {
            // CRCs are ignored by the trusted decoder, so they are written as zeros.
            try PNGChunkFilter.signature.withUnsafeBytes { try decoder.feed($0) }
            try Self.feedChunk("IHDR", ihdr, to: decoder)
            if let palette { try Self.feedChunk("PLTE", palette, to: decoder) }
            if let transparency { try Self.feedChunk("tRNS", transparency, to: decoder) }
            for piece in frame.data { try Self.feedChunk("IDAT", piece, to: decoder) }
            try Self.feedChunk("IEND", [], to: decoder)
        } catch {
            return nil
        }
        return decoder.isFinished ? decoder.takeCanvas() : nil
    }

    private static func feedChunk(_ type: StaticString, _ data: [UInt8], to decoder: PNGStreamDecoder) throws {
        let type = PNGChunkType(type).rawValue
        var head = [UInt8](repeating: 0, count: 8)
        for (i, shift) in [24, 16, 8, 0].enumerated() {
            head[i] = UInt8(truncatingIfNeeded: data.count >> shift)
            head[4 + i] = UInt8(truncatingIfNeeded: type >> UInt32(shift))
        }
        try head.withUnsafeBytes { try decoder.feed($0) }
        try data.withUnsafeBytes { try decoder.feed($0) }
        try [UInt8](repeating: 0, count: 4).withUnsafeBytes { try decoder.feed($0) }
    }

    // MARK: - Compositing (rectangles are inside the canvas: APNGFrameControl checked them)

    private static func copyRect(_ canvas: [UInt8], width: Int, _ c: APNGFrameControl) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: c.width * c.height * 4)
        let rowBytes = c.width * 4
        for row in 0..<c.height {
            let from = ((c.y + row) * width + c.x) * 4
            out.replaceSubrange(row * rowBytes..<(row + 1) * rowBytes, with: canvas[from..<from + rowBytes])
        }
        return out
    }

    private static func pasteRect(_ rect: [UInt8], on canvas: inout [UInt8], width: Int, _ c: APNGFrameControl) {
        let rowBytes = c.width * 4
        for row in 0..<c.height {
            let to = ((c.y + row) * width + c.x) * 4
            canvas.replaceSubrange(to..<to + rowBytes, with: rect[row * rowBytes..<(row + 1) * rowBytes])
        }
    }

    private static func clearRect(_ canvas: inout [UInt8], width: Int, _ c: APNGFrameControl) {
        let rowBytes = c.width * 4
        canvas.withUnsafeMutableBufferPointer { dst in
            for row in 0..<c.height {
                let to = ((c.y + row) * width + c.x) * 4
                for i in to..<to + rowBytes { dst[i] = 0 }
            }
        }
    }

    private static func draw(_ frame: [UInt8], on canvas: inout [UInt8], width: Int, _ c: APNGFrameControl) {
        guard c.blend == .over else {
            pasteRect(frame, on: &canvas, width: width, c)
            return
        }
        frame.withUnsafeBufferPointer { src in
            canvas.withUnsafeMutableBufferPointer { dst in
                for row in 0..<c.height {
                    var s = row * c.width * 4
                    var d = ((c.y + row) * width + c.x) * 4
                    for _ in 0..<c.width {
                        blendOver(src, s, dst, d)
                        s += 4
                        d += 4
                    }
                }
            }
        }
    }

    /// Straight-alpha source-over with rounding: result alpha = sa + da(1 - sa), colours weighted by
    /// their alphas. A transparent source leaves the canvas as it is; an opaque one replaces it.
    @inline(__always)
    private static func blendOver(_ src: UnsafeBufferPointer<UInt8>, _ s: Int, _ dst: UnsafeMutableBufferPointer<UInt8>, _ d: Int) {
        let sa = Int(src[s + 3])
        if sa == 0 { return }
        if sa == 255 {
            dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]; dst[d + 3] = 255
            return
        }
        let da = Int(dst[d + 3])
        let dw = da * (255 - sa)            // destination weight, scaled by 255
        let total = sa * 255 + dw           // result alpha scaled by 255; > 0 since sa > 0
        for k in 0..<3 {
            let value = Int(src[s + k]) * sa * 255 + Int(dst[d + k]) * dw
            dst[d + k] = UInt8(truncatingIfNeeded: (value + total / 2) / total)
        }
        dst[d + 3] = UInt8(truncatingIfNeeded: (total + 127) / 255)
    }
}

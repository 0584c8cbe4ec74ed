/// Composites animated WebP frames onto full canvases exactly as libwebp's WebPAnimDecoder does (the
/// reference decoder behind Pillow and browsers' libwebp builds), so frame hashes match bit for bit:
///
/// - the canvas starts transparent black (the ANIM background colour is only a hint, libwebp ignores it);
/// - a key frame (the first, an opaque or non-blending full-canvas frame, or one after a full-canvas or
///   key frame disposed to background) starts from a transparent canvas;
/// - otherwise the frame starts from the previous canvas after disposal, its rectangle is overwritten, and
///   with alpha-blending its non-opaque pixels are blended over the disposed previous canvas with libwebp's
///   integer "non-premultiplied" formula (skipping the previous frame's disposed rectangle, as libwebp does);
/// - dispose-to-background clears the frame's rectangle to transparent before the next frame.
struct WebPAnimationCompositor {
    struct Placement: Sendable {
        let x: Int, y: Int, width: Int, height: Int
        let hasAlpha: Bool
        let blends: Bool
        let disposesToBackground: Bool
    }

    let canvasWidth: Int
    let canvasHeight: Int
    private var previousDisposed: [UInt8]
    private var previous: Placement?
    private var previousWasKeyFrame = false

    init(canvasWidth: Int, canvasHeight: Int) {
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        previousDisposed = [UInt8](repeating: 0, count: canvasWidth * canvasHeight * 4)
    }

    /// Adds one frame at `placement` (which the caller has checked lies inside the canvas) and returns the
    /// composited canvas. `draw` decodes the frame's RGBA8 pixels into the canvas: it gets the address of
    /// the rectangle's top-left pixel, the bytes available from there, and the canvas row stride.
    mutating func add(
        at placement: Placement, draw: (UnsafeMutablePointer<UInt8>, Int, Int) throws -> Void
    ) throws -> [UInt8] {
        let isKey = isKeyFrame(placement)
        var canvas = isKey ? [UInt8](repeating: 0, count: previousDisposed.count) : previousDisposed
        let stride = canvasWidth * 4
        let origin = placement.y * stride + placement.x * 4
        try canvas.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            try draw(base + origin, out.count - origin, stride)
            guard placement.blends, !isKey, let previous else { return }
            previousDisposed.withUnsafeBufferPointer { before in
                for canvasY in placement.y..<placement.y + placement.height {
                    for span in blendSpans(row: canvasY, current: placement, previous: previous) {
                        Self.blendRow(out, before, from: canvasY * stride + span.lowerBound * 4, count: span.count)
                    }
                }
            }
        }
        previousDisposed = canvas
        if placement.disposesToBackground {
            for row in placement.y..<placement.y + placement.height {
                let start = row * stride + placement.x * 4
                for i in start..<start + placement.width * 4 { previousDisposed[i] = 0 }
            }
        }
        previous = placement
        previousWasKeyFrame = isKey
        return canvas
    }

    private func isKeyFrame(_ p: Placement) -> Bool {
        Self.isKeyFrame(p, previous: previous, previousWasKeyFrame: previousWasKeyFrame,
                        canvasWidth: canvasWidth, canvasHeight: canvasHeight)
    }

    /// libwebp's key-frame rule: the frame's composite does not depend on any earlier frame.
    static func isKeyFrame(_ p: Placement, previous: Placement?, previousWasKeyFrame: Bool, canvasWidth: Int, canvasHeight: Int) -> Bool {
        guard let previous else { return true }
        func isFullCanvas(_ p: Placement) -> Bool { p.width == canvasWidth && p.height == canvasHeight }
        if (!p.hasAlpha || !p.blends) && isFullCanvas(p) { return true }
        return previous.disposesToBackground && (isFullCanvas(previous) || previousWasKeyFrame)
    }

    /// Canvas columns of `row` to blend: the whole frame row, except (when the previous frame was disposed
    /// to background) the part inside the previous rectangle, which libwebp leaves unblended.
    private func blendSpans(row: Int, current: Placement, previous: Placement) -> [Range<Int>] {
        let whole = current.x..<current.x + current.width
        guard previous.disposesToBackground else { return [whole] }
        let prevRight = previous.x + previous.width
        if row < previous.y || row >= previous.y + previous.height || current.x >= prevRight || whole.upperBound <= previous.x {
            return [whole]
        }
        var spans: [Range<Int>] = []
        if current.x < previous.x { spans.append(current.x..<previous.x) }
        if whole.upperBound > prevRight { spans.append(prevRight..<whole.upperBound) }
        return spans
    }

    /// libwebp's BlendPixelRowNonPremult: `dst` pixels that are not opaque are blended over `below`.
    private static func blendRow(_ dst: UnsafeMutableBufferPointer<UInt8>, _ below: UnsafeBufferPointer<UInt8>, from start: Int, count: Int) {
        guard let d = dst.baseAddress, let b = below.baseAddress else { return }
        for p in stride(from: start, to: start + count * 4, by: 4) {
            let srcA = UInt32(d[p + 3])
            if srcA == 255 { continue }
            if srcA == 0 {
                // Fully transparent: the pixel below shows through unchanged (4 bytes at once).
                UnsafeMutableRawPointer(d + p).copyMemory(from: b + p, byteCount: 4)
                continue
            }
            let dstA = UInt32(b[p + 3])
            let dstFactorA = (dstA * (256 - srcA)) >> 8
            let blendA = srcA + dstFactorA
            let scale = UInt64((1 << 24) / blendA)
            for c in 0..<3 {
                let unscaled = UInt64(UInt32(d[p + c]) * srcA + UInt32(b[p + c]) * dstFactorA)
                d[p + c] = UInt8(truncatingIfNeeded: (unscaled * scale) >> 24)
            }
            d[p + 3] = UInt8(truncatingIfNeeded: blendA)
        }
    }
}

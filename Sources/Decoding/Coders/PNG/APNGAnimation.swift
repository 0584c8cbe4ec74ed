import Foundation

/// The animation of an APNG file, collected from its acTL/fcTL/fdAT chunks as they stream past, then
/// decoded and composited once the file is complete.
///
/// Debian's libpng has no APNG support, so each frame is rebuilt as a small standalone PNG (IHDR with the
/// frame's size, the file's PLTE and tRNS, IDAT made of the frame's fdAT data) and decoded by the same
/// libpng reader as the default image. Composition follows the APNG specification: the canvas starts
/// fully transparent, dispose and blend operations apply per frame, "over" is straight-alpha source-over.
///
/// When the default image is not part of the animation (IDAT before the first fcTL), it is still
/// reported as frame 0, as Pillow (the corpus reference) does, so `pixels` is always the first frame.
/// Structural problems never fail the decode: the animation ends at the last good frame (a broken
/// acTL leaves a still image).
struct APNGAnimation {
    /// Frames beyond this are ignored, whatever acTL claims.
    static let maximumFrames = 10_000

    private struct Frame {
        var control: APNGFrameControl
        var data: [[UInt8]] = []
    }

    private var header: [UInt8] = []
    private var palette: [UInt8]?
    private var transparency: [UInt8]?
    private var seenIDAT = false
    private var seenAcTL = false
    private var declaredFrames = 0
    private var accepting = true
    private var frames: [Frame] = []
    /// fcTL came before IDAT: the default image is the animation's first frame.
    private var defaultImageIsFirstFrame = false
    /// acTL num_plays: 0 means forever.
    private(set) var loopCount = 0

    /// Whether a valid acTL announced an animation.
    var isAnimated: Bool { seenAcTL && declaredFrames > 0 && !frames.isEmpty }

    mutating func chunkBegins(_ type: PNGChunkType) {
        if type == .IDAT { seenIDAT = true }
    }

    mutating func record(_ type: PNGChunkType, data: [UInt8], canvasWidth: Int, canvasHeight: Int) {
        switch type {
        case .IHDR where header.isEmpty:
            header = data
        case .PLTE where !seenIDAT:
            palette = data
        case .tRNS where !seenIDAT:
            transparency = data
        case .acTL:
            guard !seenAcTL, !seenIDAT, data.count >= 8 else {
                // A second or misplaced acTL makes the animation invalid (the default image remains).
                declaredFrames = 0
                accepting = false
                return
            }
            seenAcTL = true
            let count = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
            let plays = Int(data[4]) << 24 | Int(data[5]) << 16 | Int(data[6]) << 8 | Int(data[7])
            guard count > 0, count <= 0x7FFF_FFFF else {
                accepting = false
                return
            }
            declaredFrames = min(count, Self.maximumFrames)
            loopCount = plays
        case .fcTL:
            guard accepting, seenAcTL, declaredFrames > 0 else { return }
            guard frames.count < declaredFrames,
                  let control = APNGFrameControl(data, canvasWidth: canvasWidth, canvasHeight: canvasHeight) else {
                accepting = false
                return
            }
            if !seenIDAT {
                // Only the default image's own fcTL may come before IDAT, and it must cover the canvas.
                guard frames.isEmpty, control.coversCanvas(width: canvasWidth, height: canvasHeight) else {
                    accepting = false
                    return
                }
                defaultImageIsFirstFrame = true
            }
            frames.append(Frame(control: control))
        case .fdAT:
            guard accepting, data.count > 4, let last = frames.indices.last,
                  !(last == 0 && defaultImageIsFirstFrame) else { return }
            frames[last].data.append(Array(data[4...]))  // after the sequence number
        default:
            break
        }
    }

    /// Decodes and composites every frame. `defaultImage` is the decoded IDAT image (canvas size).
    /// Stops early at a frame that does not decode, or when all frames together would exceed `pixelBudget`
    /// pixels. Returns no frames when fewer than two could be produced (a still image).
    func compose(defaultImage: [UInt8], width: Int, height: Int, pixelBudget: Int) -> [ImageFrame] {
        guard isAnimated, width > 0, height > 0 else { return [] }
        let canvasPixels = width * height
        let maximumCount = max(1, pixelBudget / canvasPixels)
        var result: [ImageFrame] = []
        if !defaultImageIsFirstFrame {
            // Not part of the animation, yet reported first (see the type's comment).
            result.append(ImageFrame(pixels: defaultImage, duration: 0.1))
        }
        var canvas = [UInt8](repeating: 0, count: canvasPixels * 4)
        for (index, frame) in frames.enumerated() {
            guard result.count < maximumCount else { break }
            let pixels: [UInt8]
            if index == 0 && defaultImageIsFirstFrame {
                pixels = defaultImage
            } else if let decoded = decode(frame) {
                pixels = decoded
            } else {
                break
            }
            var control = frame.control
            if index == 0 {
                // Nothing to restore before the first frame; and on the fresh canvas the source is copied
                // as is (identical to "over" on transparent black, and keeps the colours of clear pixels).
                if control.dispose == .previous { control.dispose = .background }
                control.blend = .source
            }
            let saved = control.dispose == .previous ? Self.copyRect(canvas, width: width, control) : nil
            Self.draw(pixels, on: &canvas, width: width, control)
            result.append(ImageFrame(pixels: canvas, duration: control.duration))
            switch control.dispose {
            case .none: break
            case .background: Self.clearRect(&canvas, width: width, control)
            case .previous: if let saved { Self.pasteRect(saved, on: &canvas, width: width, control) }
            }
        }
        return result.count >= 2 ? result : []
    }

    /// Decodes one frame's data as a standalone PNG of the frame's size.
    private func decode(_ frame: Frame) -> [UInt8]? {
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

/// Compositing on a GIF canvas: RGBA8 bytes, written a pixel at a time as packed values
/// (`GIFStreamDecoder.pack`), so the canvas itself is the image handed out (the poster needs no copy). Shared
/// by the decoder that renders the poster while bytes arrive and by the compositor that renders frames on
/// demand.
enum GIFCanvas {
    /// A canvas of `pixels` pixels, each `value`.
    static func filled(with value: UInt32, pixels: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: pixels * 4) { buffer, initialized in
            buffer.withMemoryRebound(to: UInt32.self) { $0.initialize(repeating: value) }
            initialized = pixels * 4
        }
    }

    /// `canvas` seen as packed pixels.
    private static func withPixels<R>(_ canvas: inout [UInt8], _ body: (UnsafeMutableBufferPointer<UInt32>) -> R) -> R {
        canvas.withUnsafeMutableBufferPointer { bytes in bytes.withMemoryRebound(to: UInt32.self, body) }
    }

    /// Draws every index `frame` has received; transparent indices leave the canvas as it is.
    static func composite(_ frame: GIFFrameState, into target: inout [UInt8], width canvasWidth: Int, height canvasHeight: Int) {
        let w = frame.writer
        let clipWidth = w.clipWidth
        guard clipWidth > 0, target.count == canvasWidth * canvasHeight * 4 else { return }
        let transparent = frame.transparentIndex ?? -1
        frame.palette.withUnsafeBufferPointer { palette in
            w.indices.withUnsafeBufferPointer { indices in
                withPixels(&target) { out in
                    func drawRow(streamRow: Int, columns: Int) {
                        let fy = w.frameRow(forStreamRow: streamRow)
                        guard fy >= w.clipY0 && fy < w.clipY1 else { return }
                        let x1 = min(w.clipX1, columns)
                        guard x1 > w.clipX0 else { return }
                        let src = (fy - w.clipY0) * clipWidth - w.clipX0
                        let dst = (frame.y + fy) * canvasWidth + frame.x
                        for fx in w.clipX0..<x1 {
                            let index = Int(indices[src + fx])
                            if index != transparent { out[dst + fx] = palette[index] }
                        }
                    }
                    for row in 0..<min(w.rowsDone, w.frameHeight) { drawRow(streamRow: row, columns: w.frameWidth) }
                    if w.rowsDone < w.frameHeight && w.column > 0 { drawRow(streamRow: w.rowsDone, columns: w.column) }
                }
            }
        }
    }

    /// The canvas bytes under the clipped frame rectangle, row after row (for disposal 3).
    static func copyRect(of frame: GIFFrameState, from canvas: [UInt8], width: Int) -> [UInt8] {
        let w = frame.writer
        var saved: [UInt8] = []
        // A frame entirely right of the screen has rows inside it but no columns: nothing to save.
        guard w.clipWidth > 0 else { return saved }
        saved.reserveCapacity(w.clipWidth * (w.clipY1 - w.clipY0) * 4)
        for fy in w.clipY0..<w.clipY1 {
            let start = ((frame.y + fy) * width + frame.x + w.clipX0) * 4
            saved.append(contentsOf: canvas[start..<(start + w.clipWidth * 4)])
        }
        return saved
    }

    static func pasteRect(_ saved: [UInt8], of frame: GIFFrameState, into canvas: inout [UInt8], width: Int) {
        let w = frame.writer
        guard w.clipWidth > 0 else { return }
        let rowBytes = w.clipWidth * 4
        var offset = 0
        for fy in w.clipY0..<w.clipY1 {
            let start = ((frame.y + fy) * width + frame.x + w.clipX0) * 4
            guard offset + rowBytes <= saved.count else { return }
            canvas.replaceSubrange(start..<(start + rowBytes), with: saved[offset..<(offset + rowBytes)])
            offset += rowBytes
        }
    }

    static func fillRect(of frame: GIFFrameState, in canvas: inout [UInt8], width: Int, with value: UInt32) {
        let w = frame.writer
        guard w.clipWidth > 0 else { return }
        withPixels(&canvas) { out in
            for fy in w.clipY0..<w.clipY1 {
                let start = (frame.y + fy) * width + frame.x + w.clipX0
                for i in start..<(start + w.clipWidth) { out[i] = value }
            }
        }
    }

    /// Disposes of `frame` as browsers do: 2 clears its rectangle to transparent (the background colour is
    /// ignored), 3 restores what was under it, anything else keeps it.
    static func dispose(_ frame: GIFFrameState, in canvas: inout [UInt8], width: Int) {
        switch frame.disposal {
        case 2:
            var clear = UInt32(0)
            if let t = frame.transparentIndex { clear = frame.palette[t] & GIFStreamDecoder.pack(255, 255, 255, 0) }
            fillRect(of: frame, in: &canvas, width: width, with: clear)
        case 3:
            if let saved = frame.savedBackground { pasteRect(saved, of: frame, into: &canvas, width: width) }
        default:
            break
        }
    }
}

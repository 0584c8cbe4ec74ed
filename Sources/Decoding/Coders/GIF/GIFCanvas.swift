/// Compositing on a GIF canvas of packed RGBA pixels (`GIFStreamDecoder.pack`), shared by the decoder that
/// renders the poster while bytes arrive and by the compositor that renders frames on demand.
enum GIFCanvas {
    /// Draws every index `frame` has received; transparent indices leave the canvas as it is.
    static func composite(_ frame: GIFFrameState, into target: inout [UInt32], width canvasWidth: Int, height canvasHeight: Int) {
        let w = frame.writer
        let clipWidth = w.clipWidth
        guard clipWidth > 0, target.count == canvasWidth * canvasHeight else { return }
        let transparent = frame.transparentIndex ?? -1
        frame.palette.withUnsafeBufferPointer { palette in
            w.indices.withUnsafeBufferPointer { indices in
                target.withUnsafeMutableBufferPointer { out in
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

    /// The canvas under the clipped frame rectangle (for disposal 3).
    static func copyRect(of frame: GIFFrameState, from canvas: [UInt32], width: Int) -> [UInt32] {
        let w = frame.writer
        var saved: [UInt32] = []
        // A frame entirely right of the screen has rows inside it but no columns: nothing to save.
        guard w.clipWidth > 0 else { return saved }
        saved.reserveCapacity(w.clipWidth * (w.clipY1 - w.clipY0))
        for fy in w.clipY0..<w.clipY1 {
            let start = (frame.y + fy) * width + frame.x + w.clipX0
            saved.append(contentsOf: canvas[start..<(start + w.clipWidth)])
        }
        return saved
    }

    static func pasteRect(_ saved: [UInt32], of frame: GIFFrameState, into canvas: inout [UInt32], width: Int) {
        let w = frame.writer
        guard w.clipWidth > 0 else { return }
        var offset = 0
        for fy in w.clipY0..<w.clipY1 {
            let start = (frame.y + fy) * width + frame.x + w.clipX0
            guard offset + w.clipWidth <= saved.count else { return }
            canvas.replaceSubrange(start..<(start + w.clipWidth), with: saved[offset..<(offset + w.clipWidth)])
            offset += w.clipWidth
        }
    }

    static func fillRect(of frame: GIFFrameState, in canvas: inout [UInt32], width: Int, with value: UInt32) {
        let w = frame.writer
        guard w.clipWidth > 0 else { return }
        canvas.withUnsafeMutableBufferPointer { out in
            for fy in w.clipY0..<w.clipY1 {
                let start = (frame.y + fy) * width + frame.x + w.clipX0
                for i in start..<(start + w.clipWidth) { out[i] = value }
            }
        }
    }

    /// Disposes of `frame` as browsers do: 2 clears its rectangle to transparent (the background colour is
    /// ignored), 3 restores what was under it, anything else keeps it.
    static func dispose(_ frame: GIFFrameState, in canvas: inout [UInt32], width: Int) {
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

    static func bytes(of pixels: [UInt32]) -> [UInt8] {
        pixels.withUnsafeBytes { Array($0) }
    }
}

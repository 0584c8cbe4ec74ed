/// Receives a frame's palette indices in stream order (rows in interlace order when interlaced) and keeps
/// only the part that falls inside the canvas, so memory is bounded by the canvas, never by a frame's
/// declared size.
struct GIFFrameWriter {
    /// The frame rectangle on the canvas, as declared (may reach outside the canvas).
    let frameX: Int, frameY: Int, frameWidth: Int, frameHeight: Int
    let interlaced: Bool
    /// The part of the frame inside the canvas, in frame coordinates.
    let clipX0: Int, clipX1: Int, clipY0: Int, clipY1: Int
    /// Indices of the clipped rectangle, row-major, `(clipX1 - clipX0)` per row.
    private(set) var indices: [UInt8]
    /// Complete rows in stream order, and the column reached in the current one.
    private(set) var rowsDone = 0
    private(set) var column = 0
    private var currentRow = 0

    init(x: Int, y: Int, width: Int, height: Int, interlaced: Bool, canvasWidth: Int, canvasHeight: Int) {
        frameX = x
        frameY = y
        frameWidth = width
        frameHeight = height
        self.interlaced = interlaced
        clipX0 = min(width, max(0, -x))
        clipX1 = max(clipX0, min(width, canvasWidth - x))
        clipY0 = min(height, max(0, -y))
        clipY1 = max(clipY0, min(height, canvasHeight - y))
        indices = [UInt8](repeating: 0, count: (clipX1 - clipX0) * (clipY1 - clipY0))
    }

    var clipWidth: Int { clipX1 - clipX0 }
    var isComplete: Bool { rowsDone >= frameHeight }

    /// The frame row that the `n`-th row in stream order lands on.
    func frameRow(forStreamRow n: Int) -> Int {
        guard interlaced else { return n }
        // Passes start at rows 0, 4, 2, 1 with steps 8, 8, 4, 2.
        let h = frameHeight
        let pass0 = (h + 7) / 8, pass1 = (h + 3) / 8, pass2 = (h + 1) / 4
        if n < pass0 { return n * 8 }
        if n < pass0 + pass1 { return 4 + (n - pass0) * 8 }
        if n < pass0 + pass1 + pass2 { return 2 + (n - pass0 - pass1) * 4 }
        return 1 + (n - pass0 - pass1 - pass2) * 2
    }

    /// Appends indices in stream order; returns false once the frame is full (extra pixels are dropped).
    mutating func write(_ run: UnsafeBufferPointer<UInt8>) -> Bool {
        var offset = 0
        let total = run.count
        while offset < total {
            guard rowsDone < frameHeight, frameWidth > 0 else { return false }
            let n = min(total - offset, frameWidth - column)
            // Copy the columns of this piece that fall inside the clip, if the row does.
            if currentRow >= clipY0 && currentRow < clipY1 {
                let lo = max(column, clipX0), hi = min(column + n, clipX1)
                if lo < hi {
                    let dst = (currentRow - clipY0) * (clipX1 - clipX0) + (lo - clipX0)
                    let src = offset + (lo - column)
                    indices.withUnsafeMutableBufferPointer { out in
                        guard let o = out.baseAddress, let s = run.baseAddress else { return }
                        (o + dst).update(from: s + src, count: hi - lo)
                    }
                }
            }
            column += n
            offset += n
            if column == frameWidth {
                column = 0
                rowsDone += 1
                currentRow = nextRow()
            }
        }
        return rowsDone < frameHeight
    }

    private mutating func nextRow() -> Int {
        guard interlaced else { return rowsDone }
        return frameRow(forStreamRow: rowsDone)
    }
}

/// One frame while its image data is being decoded: descriptor, palette, Graphic Control values, the LZW
/// state and the indices received so far.
final class GIFFrameState {
    let x: Int, y: Int, width: Int, height: Int
    /// 256 RGBA entries (packed in memory order r, g, b, a); indices past the palette are opaque black.
    let palette: [UInt32]
    let transparentIndex: Int?
    let disposal: Int
    let duration: Double
    var lzw: GIFLZWDecoder?
    var writer: GIFFrameWriter
    /// The canvas bytes under the clipped frame rectangle before drawing, kept only for disposal 3 (restore previous).
    var savedBackground: [UInt8]?
    /// True when the minimum code size was invalid: the frame draws nothing.
    var badCodeSize = false

    init(x: Int, y: Int, width: Int, height: Int, interlaced: Bool, palette: [UInt32],
         transparentIndex: Int?, disposal: Int, duration: Double, canvasWidth: Int, canvasHeight: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.palette = palette
        self.transparentIndex = transparentIndex
        self.disposal = disposal
        self.duration = duration
        writer = GIFFrameWriter(x: x, y: y, width: width, height: height, interlaced: interlaced,
                                canvasWidth: canvasWidth, canvasHeight: canvasHeight)
    }

    /// Whether any pixel index has arrived.
    var hasPixels: Bool { writer.rowsDone > 0 || writer.column > 0 }

    /// Whether decoding failed before any pixel arrived (bad code size or an invalid first code).
    var isBroken: Bool { !hasPixels && (badCodeSize || (lzw?.sawInvalidCode ?? false)) }
}

/// The Graphic Control Extension that applies to the next frame.
struct GIFGraphicControl {
    var disposal: Int
    var delay: Int
    var transparentIndex: Int?

    /// Browsers show frames declared shorter than 20 ms for 100 ms (the "0 delay" GIFs of the web).
    static func browserDuration(centiseconds: Int) -> Double {
        let ms = centiseconds * 10
        return ms < 20 ? 0.1 : Double(ms) / 1000
    }
}

import Foundation

/// A GIF's frames for `AnimatedImage`: the file's bytes and the index of its frames, composited on demand
/// with the rules `GIFStreamDecoder` documents (each frame's LZW data is decoded again when it is drawn).
///
/// Key frames (compositing may start there): the first frame, and every frame after one that covers the
/// whole screen and is disposed to background (the canvas is then uniformly cleared).
struct GIFAnimation: AnimationSource {
    let bytes: [UInt8]
    let records: [GIFFrameRecord]
    let canvasWidth: Int
    let canvasHeight: Int
    let globalPaletteEntries: Int?
    /// The canvas before the first frame (`GIFStreamDecoder` documents the rule).
    let initialCanvasValue: UInt32
    let loopCount: Int
    /// Key frames in order, with the value the canvas is filled with before each.
    private let keys: [(index: Int, fill: UInt32)]

    init(bytes: [UInt8], records: [GIFFrameRecord], canvasWidth: Int, canvasHeight: Int, globalPaletteEntries: Int?,
         initialCanvasValue: UInt32, loopCount: Int) {
        self.bytes = bytes
        self.records = records
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.globalPaletteEntries = globalPaletteEntries
        self.initialCanvasValue = initialCanvasValue
        self.loopCount = loopCount
        var keys = [(index: 0, fill: initialCanvasValue)]
        for index in records.indices.dropFirst() {
            let previous = records[index - 1]
            guard previous.disposal == 2, previous.coversCanvas(width: canvasWidth, height: canvasHeight) else { continue }
            var clear = UInt32(0)
            if let t = previous.transparentIndex {
                clear = GIFAnimation.palette(for: previous, in: bytes, globalEntries: globalPaletteEntries)[t]
                    & GIFStreamDecoder.pack(255, 255, 255, 0)
            }
            keys.append((index, clear))
        }
        self.keys = keys
    }

    var frameCount: Int { records.count }
    func duration(at index: Int) -> TimeInterval { records[index].duration }
    var retainedBytes: Int { bytes.count + records.count * MemoryLayout<GIFFrameRecord>.stride }
    /// The packed canvas, the clipped indices of one frame and what disposal 3 saves: each at most the canvas.
    var workingBytes: Int { canvasWidth * canvasHeight * 9 }

    func keyFrame(atOrBefore index: Int) -> Int {
        keyEntry(atOrBefore: index).index
    }

    private func keyEntry(atOrBefore index: Int) -> (index: Int, fill: UInt32) {
        var low = 0, high = keys.count - 1
        while low < high {  // the last key at or before `index`
            let mid = (low + high + 1) / 2
            if keys[mid].index <= index { low = mid } else { high = mid - 1 }
        }
        return keys[low]
    }

    func makeCompositor(startingAt keyFrame: Int) -> any AnimationCompositor {
        let key = keyEntry(atOrBefore: keyFrame)
        return Compositor(animation: self, next: key.index, fill: key.fill)
    }

    func hasSameContent(as other: any AnimationSource) -> Bool {
        guard let other = other as? GIFAnimation else { return false }
        return records.count == other.records.count && bytes == other.bytes
    }

    /// The 256-entry palette a frame draws with: its local table, else the global one, else gray levels.
    static func palette(for record: GIFFrameRecord, in bytes: [UInt8], globalEntries: Int?) -> [UInt32] {
        if let offset = record.localPaletteOffset { return GIFStreamDecoder.readPalette(bytes, at: offset, entries: record.localPaletteEntries) }
        if let entries = globalEntries { return GIFStreamDecoder.readPalette(bytes, at: 13, entries: entries) }
        return GIFStreamDecoder.grayscalePalette
    }

    /// Draws the frames of one `GIFAnimation` in order on a kept canvas.
    final class Compositor: AnimationCompositor {
        private let animation: GIFAnimation
        private(set) var nextIndex: Int
        private var canvas: [UInt8]

        init(animation: GIFAnimation, next: Int, fill: UInt32) {
            self.animation = animation
            nextIndex = next
            canvas = GIFCanvas.filled(with: fill, pixels: animation.canvasWidth * animation.canvasHeight)
        }

        var retainedBytes: Int { canvas.count }

        func advance(output: Bool) throws -> [UInt8]? {
            let a = animation
            let record = a.records[nextIndex]
            nextIndex += 1
            let frame = GIFFrameState(
                x: record.x, y: record.y, width: record.width, height: record.height, interlaced: record.interlaced,
                palette: GIFAnimation.palette(for: record, in: a.bytes, globalEntries: a.globalPaletteEntries),
                transparentIndex: record.transparentIndex, disposal: record.disposal, duration: record.duration,
                canvasWidth: a.canvasWidth, canvasHeight: a.canvasHeight)
            if frame.disposal == 3 { frame.savedBackground = GIFCanvas.copyRect(of: frame, from: canvas, width: a.canvasWidth) }
            decode(record, into: frame)
            GIFCanvas.composite(frame, into: &canvas, width: a.canvasWidth, height: a.canvasHeight)
            // Shared until the canvas changes next (disposal, or the next frame): one copy per frame handed out.
            let out = output ? canvas : nil
            GIFCanvas.dispose(frame, in: &canvas, width: a.canvasWidth)
            return out
        }

        /// Runs the frame's complete sub-blocks through a fresh LZW decoder.
        private func decode(_ record: GIFFrameRecord, into frame: GIFFrameState) {
            let lzw = GIFLZWDecoder(minCodeSize: record.minCodeSize)
            animation.bytes.withUnsafeBufferPointer { all in
                var position = record.dataStart
                let end = min(record.dataEnd, all.count)
                while position < end, !lzw.isFinished {  // advances by at least one byte
                    let size = Int(all[position])
                    guard size > 0, position + 1 + size <= end else { break }
                    lzw.decode(UnsafeBufferPointer(rebasing: all[(position + 1)..<(position + 1 + size)]), into: &frame.writer)
                    position += size + 1
                }
            }
        }
    }
}

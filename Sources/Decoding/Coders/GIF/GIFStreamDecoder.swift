import Foundation

/// Parses GIF blocks as bytes arrive (never going back to byte 0) and composites every frame onto a canvas
/// with the browser rules. `GIFCoder.decode` and `GIFIncrementalDecoder` both run this one engine, which is
/// what makes the incremental result identical to the one-shot one.
///
/// Browser rules followed: the canvas starts transparent; transparent-index pixels leave the canvas as it is;
/// disposal 2 clears the frame rectangle to transparent (the background colour is ignored); disposal 3
/// restores what was under the frame; other values keep the frame. Frames are clipped to the logical screen.
/// Stray bytes between blocks are skipped until the next block introducer (GIF87a's rule, also Pillow's).
final class GIFStreamDecoder {
    private enum State {
        case header
        case globalPalette(entries: Int)
        case blockStart
        case extensionLabel
        case extensionData(ExtensionKind)
        case imageDescriptor
        case localPalette(entries: Int, descriptor: [UInt8])
        case codeSize
        case imageData
        case done
    }

    private enum ExtensionKind {
        case graphicControl(first: Bool)
        case application(first: Bool)
        case loopCount
        case skip
    }

    private let options: ImageDecodingOptions
    private var buffer: [UInt8] = []
    private var position = 0
    private var state = State.header
    private var failure: (any Error)?

    private(set) var width = 0
    private(set) var height = 0
    private var globalPalette: [UInt32]?
    private var declaredLoopCount: Int?
    private var control: GIFGraphicControl?
    private var frame: GIFFrameState?
    private var canvas: [UInt32] = []
    private var frames: [ImageFrame] = []
    /// Canvas pixels held by all frames so far: animations are bounded by `maximumPixelCount` in total.
    private var heldPixels = 0
    private var framesDropped = false
    private var sawBrokenFrame = false
    private var isFinal = false

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    /// Parses as far as the bytes allow. Throws for a bad header, a zero or oversized canvas, or a frame
    /// whose extent exceeds the pixel limit; after a throw the decoder stays failed.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        if let failure { throw failure }
        if case .done = state { return }
        if position > 65_536 && position * 2 > buffer.count {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
        do {
            try parse()
        } catch {
            failure = error
            buffer = []
            throw error
        }
    }

    /// No more bytes will come: throws when nothing at all could be decoded.
    func finish() throws {
        if let failure { throw failure }
        isFinal = true
        buffer = []
        position = 0
        if frames.isEmpty && !(frame?.hasPixels ?? false) {
            let error: ImageDecodingError
            if width == 0 {
                error = .truncated
            } else if sawBrokenFrame || (frame?.isBroken ?? false) {
                error = .corrupt("GIF image data has an invalid LZW code or code size")
            } else if case .done = state {
                error = .corrupt("GIF has no image frames")
            } else {
                error = .truncated
            }
            failure = error
            throw error
        }
    }

    /// The image so far: complete frames plus the frame being decoded, or nil before any pixel.
    func image() -> DecodedImage? {
        var all = frames
        var partial = false
        if let frame, frame.hasPixels {
            all.append(ImageFrame(pixels: bytes(of: composited(frame)), duration: frame.duration))
            partial = true
        }
        guard let first = all.first else { return nil }
        var complete: Bool
        switch state {
        case .done: complete = true
        case .blockStart: complete = isFinal
        default: complete = false
        }
        if partial || framesDropped { complete = false }
        let animated = all.count > 1 && !options.decodeFirstFrameOnly
        return DecodedImage(
            width: width, height: height, pixels: first.pixels, format: .gif,
            frames: animated ? all : [], loopCount: declaredLoopCount ?? 1, isIncomplete: !complete)
    }

    // MARK: - Block parsing

    private var available: Int { buffer.count - position }

    private func byte(_ offset: Int) -> Int { Int(buffer[position + offset]) }

    private func u16(_ offset: Int) -> Int { byte(offset) | byte(offset + 1) << 8 }

    private func parse() throws {
        // Each step consumes input or stops for more, so the loop ends with the data.
        while true {
            switch state {
            case .header:
                guard available >= 13 else { return }
                guard byte(0) == 0x47, byte(1) == 0x49, byte(2) == 0x46, byte(3) == 0x38,
                      byte(4) == 0x37 || byte(4) == 0x39, byte(5) == 0x61 else {
                    throw ImageDecodingError.corrupt("not a GIF signature")
                }
                let w = u16(6), h = u16(8), flags = byte(10)
                try options.checkDimensions(width: w, height: h)
                width = w
                height = h
                position += 13
                state = flags & 0x80 != 0 ? .globalPalette(entries: 2 << (flags & 7)) : .blockStart

            case .globalPalette(let entries):
                guard available >= entries * 3 else { return }
                globalPalette = readPalette(entries: entries)
                position += entries * 3
                state = .blockStart

            case .blockStart:
                guard available >= 1 else { return }
                let introducer = byte(0)
                position += 1
                switch introducer {
                case 0x21: state = .extensionLabel
                case 0x2C: state = .imageDescriptor
                case 0x3B: state = .done
                default: break  // stray byte: skip it and look again
                }

            case .extensionLabel:
                guard available >= 1 else { return }
                let label = byte(0)
                position += 1
                switch label {
                case 0xF9: state = .extensionData(.graphicControl(first: true))
                case 0xFF: state = .extensionData(.application(first: true))
                default: state = .extensionData(.skip)
                }

            case .extensionData(let kind):
                guard available >= 1 else { return }
                let size = byte(0)
                guard available >= size + 1 else { return }
                if size == 0 {
                    position += 1
                    state = .blockStart
                    continue
                }
                var next = ExtensionKind.skip
                switch kind {
                case .graphicControl(true) where size >= 4:
                    let flags = byte(1)
                    control = GIFGraphicControl(
                        disposal: (flags >> 2) & 7, delay: u16(2), transparentIndex: flags & 1 != 0 ? byte(4) : nil)
                case .application(true) where size == 11:
                    let id = String(decoding: buffer[(position + 1)..<(position + 12)], as: UTF8.self)
                    if id == "NETSCAPE2.0" || id == "ANIMEXTS1.0" { next = .loopCount }
                case .loopCount where size >= 3 && byte(1) == 1:
                    declaredLoopCount = u16(2)
                default:
                    break
                }
                position += size + 1
                state = .extensionData(next)

            case .imageDescriptor:
                guard available >= 9 else { return }
                let descriptor = Array(buffer[position..<(position + 9)])
                position += 9
                let flags = Int(descriptor[8])
                if flags & 0x80 != 0 {
                    state = .localPalette(entries: 2 << (flags & 7), descriptor: descriptor)
                } else {
                    try beginFrame(descriptor: descriptor, localPalette: nil)
                }

            case .localPalette(let entries, let descriptor):
                guard available >= entries * 3 else { return }
                let palette = readPalette(entries: entries)
                position += entries * 3
                try beginFrame(descriptor: descriptor, localPalette: palette)

            case .codeSize:
                guard available >= 1 else { return }
                let minCodeSize = byte(0)
                position += 1
                if let frame {
                    if (1...11).contains(minCodeSize) {
                        frame.lzw = GIFLZWDecoder(minCodeSize: minCodeSize)
                    } else {
                        frame.badCodeSize = true
                    }
                }
                state = .imageData

            case .imageData:
                guard available >= 1 else { return }
                let size = byte(0)
                guard available >= size + 1 else { return }
                if size == 0 {
                    position += 1
                    endFrame()
                    continue
                }
                if let frame, frame.lzw?.isFinished == false {
                    let start = position + 1
                    buffer.withUnsafeBufferPointer { all in
                        let slice = UnsafeBufferPointer(rebasing: all[start..<(start + size)])
                        frame.lzw?.decode(slice, into: &frame.writer)
                    }
                }
                position += size + 1

            case .done:
                return
            }
        }
    }

    /// Reads `entries` RGB triplets into a 256-entry table; missing entries are opaque black.
    private func readPalette(entries: Int) -> [UInt32] {
        var table = [UInt32](repeating: Self.pack(0, 0, 0, 255), count: 256)
        for i in 0..<min(entries, 256) {
            let o = position + i * 3
            table[i] = Self.pack(buffer[o], buffer[o + 1], buffer[o + 2], 255)
        }
        return table
    }

    /// A packed pixel whose bytes in memory are r, g, b, a on every platform.
    static func pack(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) -> UInt32 {
        (UInt32(r) | UInt32(g) << 8 | UInt32(b) << 16 | UInt32(a) << 24).littleEndian
    }

    /// Without any colour table, browsers and Pillow read indices as gray levels.
    private static let grayscalePalette: [UInt32] = (0..<256).map { pack(UInt8($0), UInt8($0), UInt8($0), 255) }

    // MARK: - Frames

    /// Starts a frame and moves on to its code size, or stops when the frame budget is spent.
    private func beginFrame(descriptor d: [UInt8], localPalette: [UInt32]?) throws {
        state = .codeSize
        let x = Int(d[0]) | Int(d[1]) << 8, y = Int(d[2]) | Int(d[3]) << 8
        let w = Int(d[4]) | Int(d[5]) << 8, h = Int(d[6]) | Int(d[7]) << 8
        let frameControl = control
        control = nil
        guard w > 0, h > 0 else {
            frame = nil  // an empty rectangle draws nothing; its data is skipped
            return
        }
        // A frame reaching far outside a small screen is how decompression bombs look (Pillow grows its canvas
        // to the frame's extent); the extent must fit the pixel limit even though only the clipped part is kept.
        try options.checkDimensions(width: x + w, height: y + h)
        let canvasPixels = width * height
        if heldPixels + canvasPixels > options.maximumPixelCount && !frames.isEmpty {
            framesDropped = true
            frame = nil
            state = .done
            return
        }
        let palette = localPalette ?? globalPalette ?? Self.grayscalePalette
        let next = GIFFrameState(x: x, y: y, width: w, height: h, interlaced: d[8] & 0x40 != 0,
                                  palette: palette, control: frameControl, canvasWidth: width, canvasHeight: height)
        if canvas.isEmpty {
            // The first frame's transparent colour with zero alpha is as transparent as (0,0,0,0) and keeps the
            // invisible RGB identical to Pillow's, so first frames compare byte for byte.
            var start = UInt32(0)
            if let t = next.transparentIndex { start = palette[t] & Self.pack(255, 255, 255, 0) }
            canvas = [UInt32](repeating: start, count: canvasPixels)
        }
        if next.disposal == 3 { next.savedBackground = copyRect(of: next) }
        frame = next
    }

    private func endFrame() {
        state = .blockStart
        guard let frame else { return }
        self.frame = nil
        if frame.isBroken {
            sawBrokenFrame = true
            return
        }
        composite(frame, into: &canvas)
        frames.append(ImageFrame(pixels: bytes(of: canvas), duration: frame.duration))
        heldPixels += width * height
        if options.decodeFirstFrameOnly {
            state = .done
            return
        }
        switch frame.disposal {
        case 2:
            var clear = UInt32(0)
            if let t = frame.transparentIndex { clear = frame.palette[t] & Self.pack(255, 255, 255, 0) }
            fillRect(of: frame, with: clear)
        case 3: if let saved = frame.savedBackground { pasteRect(saved, of: frame) }
        default: break
        }
    }

    /// The canvas with `frame`'s pixels so far drawn on it (for partial images).
    private func composited(_ frame: GIFFrameState) -> [UInt32] {
        var copy = canvas
        composite(frame, into: &copy)
        return copy
    }

    /// Draws every index received so far; transparent indices leave the canvas as it is.
    private func composite(_ frame: GIFFrameState, into target: inout [UInt32]) {
        let w = frame.writer
        let clipWidth = w.clipWidth
        guard clipWidth > 0, target.count == width * height else { return }
        let transparent = frame.transparentIndex ?? -1
        let canvasWidth = width
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

    private func copyRect(of frame: GIFFrameState) -> [UInt32] {
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

    private func pasteRect(_ saved: [UInt32], of frame: GIFFrameState) {
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

    private func fillRect(of frame: GIFFrameState, with value: UInt32) {
        let w = frame.writer
        guard w.clipWidth > 0 else { return }
        for fy in w.clipY0..<w.clipY1 {
            let start = (frame.y + fy) * width + frame.x + w.clipX0
            for i in start..<(start + w.clipWidth) { canvas[i] = value }
        }
    }

    private func bytes(of pixels: [UInt32]) -> [UInt8] {
        pixels.withUnsafeBytes { Array($0) }
    }
}

import Foundation

/// Parses GIF blocks as bytes arrive (never going back to byte 0), decodes the first frame (the poster) and
/// indexes every other frame without decoding it: where it goes, how it is disposed of, where its LZW data
/// lies. `GIFCoder.decode` and `GIFIncrementalDecoder` both run this one engine, which is what makes the
/// incremental result identical to the one-shot one; `GIFAnimation` composites the indexed frames on demand.
///
/// Browser rules followed: the canvas starts transparent; transparent-index pixels leave the canvas as it is;
/// disposal 2 clears the frame rectangle to transparent (the background colour is ignored); disposal 3
/// restores what was under the frame; other values keep the frame. Frames are clipped to the logical screen.
/// Stray bytes between blocks are skipped until the next block introducer (GIF87a's rule, also Pillow's).
/// A frame whose data starts with an invalid code, or has an invalid code size, is skipped (nothing drawn,
/// not counted); the first code of each frame is read during indexing to know that without decoding.
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

    /// The frame whose data is being read: the poster (decoded) or a later frame (indexed and probed).
    private struct PendingFrame {
        var record: GIFFrameRecord
        /// The LZW decode of the poster frame; nil for indexed frames.
        var poster: GIFFrameState?
        var probe: GIFLZWProbe?
        var badCodeSize = false

        /// Whether drawing this frame gives at least one pixel (as far as its complete sub-blocks go).
        var hasPixels: Bool { poster?.hasPixels ?? (probe?.outcome == .pixels) }

        /// Whether it is skipped: no pixel, and an invalid code size or first code.
        var isBroken: Bool {
            if let poster { return poster.isBroken }
            return badCodeSize || probe?.outcome == .broken
        }
    }

    private let options: ImageDecodingOptions
    /// Every byte so far: later frames are composited from it on demand.
    private var buffer: [UInt8] = []
    private var position = 0
    private var state = State.header
    private var failure: (any Error)?

    private(set) var width = 0
    private(set) var height = 0
    private var globalPaletteEntries: Int?
    private var globalPalette: [UInt32]?
    private var declaredLoopCount: Int?
    private var control: GIFGraphicControl?
    private var pending: PendingFrame?
    /// Frames that count, in order.
    private var records: [GIFFrameRecord] = []
    /// The canvas (RGBA8): before the poster is complete, the one it is drawn on; then the poster itself.
    private var canvas: [UInt8] = []
    private var initialCanvasValue: UInt32?
    private var sawBrokenFrame = false
    private var isFinal = false
    private var finalImage: DecodedImage?

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    /// Parses as far as the bytes allow. Throws for a bad header, a zero or oversized canvas, a frame whose
    /// extent exceeds the pixel limit, or more frames than `maximumFrameCount`; after a throw the decoder
    /// stays failed.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        if let failure { throw failure }
        if case .done = state { return }
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
        if records.isEmpty && !(pending?.hasPixels ?? false) {
            let error: ImageDecodingError
            if width == 0 {
                error = .truncated
            } else if sawBrokenFrame || (pending?.isBroken ?? false) {
                error = .corrupt("GIF image data has an invalid LZW code or code size")
            } else if case .done = state {
                error = .corrupt("GIF has no image frames")
            } else {
                error = .truncated
            }
            failure = error
            buffer = []
            throw error
        }
        // Bytes after the trailer (or a cut-off block) are no frame's: the animation keeps what was parsed.
        if position < buffer.count { buffer.removeSubrange(position...) }
        finalImage = makeImage()
        buffer = []
        canvas = []
    }

    /// The image so far: the poster (rows so far while it arrives); once finished, with the animation.
    func image() -> DecodedImage? {
        finalImage ?? makeImage()
    }

    private var posterDone: Bool { !records.isEmpty }

    private func makeImage() -> DecodedImage? {
        let pixels: [UInt8]
        var partialFrame = false
        if posterDone {
            pixels = canvas
        } else if let poster = pending?.poster, poster.hasPixels {
            var copy = canvas
            GIFCanvas.composite(poster, into: &copy, width: width, height: height)
            pixels = copy
            partialFrame = true
        } else {
            return nil
        }
        var complete: Bool
        switch state {
        case .done: complete = true
        case .blockStart: complete = isFinal
        default: complete = false
        }
        // The last frame of a file cut short counts when it has pixels.
        var all = records
        if isFinal, !partialFrame, let pending, pending.hasPixels {
            all.append(pending.record)
            partialFrame = true
        }
        if partialFrame { complete = false }
        var animation: AnimatedImage?
        if isFinal, all.count > 1, !options.decodeFirstFrameOnly {
            let source = GIFAnimation(
                bytes: buffer, records: all, canvasWidth: width, canvasHeight: height,
                globalPaletteEntries: globalPaletteEntries, initialCanvasValue: initialCanvasValue ?? 0,
                loopCount: declaredLoopCount ?? 1)
            animation = AnimatedImage(source: source, budget: options.decodingBudget)
        }
        return DecodedImage(width: width, height: height, pixels: pixels, format: .gif, animation: animation,
                            loopCount: declaredLoopCount ?? 1, isIncomplete: !complete)
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
                // The canvas being drawn and the poster's bytes.
                try options.checkDimensions(width: w, height: h, workingCanvases: 2)
                width = w
                height = h
                position += 13
                state = flags & 0x80 != 0 ? .globalPalette(entries: 2 << (flags & 7)) : .blockStart

            case .globalPalette(let entries):
                guard available >= entries * 3 else { return }
                globalPaletteEntries = entries
                globalPalette = Self.readPalette(buffer, at: position, entries: entries)
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
                    try beginFrame(descriptor: descriptor, localPaletteOffset: nil, localEntries: 0)
                }

            case .localPalette(let entries, let descriptor):
                guard available >= entries * 3 else { return }
                let offset = position
                position += entries * 3
                try beginFrame(descriptor: descriptor, localPaletteOffset: offset, localEntries: entries)

            case .codeSize:
                guard available >= 1 else { return }
                let minCodeSize = byte(0)
                position += 1
                if var frame = pending {
                    if (1...11).contains(minCodeSize) {
                        frame.poster?.lzw = GIFLZWDecoder(minCodeSize: minCodeSize)
                        if frame.poster == nil { frame.probe = GIFLZWProbe(minCodeSize: minCodeSize) }
                    } else {
                        frame.badCodeSize = true
                        frame.poster?.badCodeSize = true
                    }
                    frame.record = frame.record.withData(minCodeSize: minCodeSize, start: position)
                    pending = frame
                }
                state = .imageData

            case .imageData:
                guard available >= 1 else { return }
                let size = byte(0)
                guard available >= size + 1 else { return }
                if size == 0 {
                    position += 1
                    try endFrame()
                    continue
                }
                if pending != nil { readSubBlock(size: size) }
                position += size + 1
                pending?.record.dataEnd = position

            case .done:
                return
            }
        }
    }

    /// Decodes (poster) or probes (other frames) the sub-block at `position`.
    private func readSubBlock(size: Int) {
        guard var frame = pending else { return }
        let start = position + 1
        buffer.withUnsafeBufferPointer { all in
            let slice = UnsafeBufferPointer(rebasing: all[start..<(start + size)])
            if let poster = frame.poster {
                if poster.lzw?.isFinished == false { poster.lzw?.decode(slice, into: &poster.writer) }
            } else if frame.probe?.outcome == .undetermined {
                frame.probe?.feed(slice)
            }
        }
        pending = frame
    }

    /// Reads `entries` RGB triplets at `offset` into a 256-entry table; missing entries are opaque black.
    static func readPalette(_ bytes: [UInt8], at offset: Int, entries: Int) -> [UInt32] {
        var table = [UInt32](repeating: pack(0, 0, 0, 255), count: 256)
        for i in 0..<min(entries, 256) {
            let o = offset + i * 3
            guard o + 2 < bytes.count else { break }
            table[i] = pack(bytes[o], bytes[o + 1], bytes[o + 2], 255)
        }
        return table
    }

    /// A packed pixel whose bytes in memory are r, g, b, a on every platform.
    static func pack(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) -> UInt32 {
        (UInt32(r) | UInt32(g) << 8 | UInt32(b) << 16 | UInt32(a) << 24).littleEndian
    }

    /// Without any colour table, browsers and Pillow read indices as gray levels.
    static let grayscalePalette: [UInt32] = (0..<256).map { pack(UInt8($0), UInt8($0), UInt8($0), 255) }

    // MARK: - Frames

    /// Starts a frame (the poster is decoded, later ones indexed) and moves on to its code size.
    private func beginFrame(descriptor d: [UInt8], localPaletteOffset: Int?, localEntries: Int) throws {
        state = .codeSize
        let x = Int(d[0]) | Int(d[1]) << 8, y = Int(d[2]) | Int(d[3]) << 8
        let w = Int(d[4]) | Int(d[5]) << 8, h = Int(d[6]) | Int(d[7]) << 8
        let frameControl = control
        control = nil
        guard w > 0, h > 0 else {
            pending = nil  // an empty rectangle draws nothing; its data is skipped
            return
        }
        // A frame reaching far outside a small screen is how decompression bombs look (Pillow grows its canvas
        // to the frame's extent); the extent must fit the pixel limit even though only the clipped part is kept.
        try options.checkPixelLimit(width: x + w, height: y + h)
        let palette = localPaletteOffset.map { Self.readPalette(buffer, at: $0, entries: localEntries) }
            ?? globalPalette ?? Self.grayscalePalette
        let transparentIndex = frameControl?.transparentIndex
        if initialCanvasValue == nil {
            // The first frame's transparent colour with zero alpha is as transparent as (0,0,0,0) and keeps the
            // invisible RGB identical to Pillow's, so first frames compare byte for byte.
            initialCanvasValue = transparentIndex.map { palette[$0] & Self.pack(255, 255, 255, 0) } ?? 0
        }
        let record = GIFFrameRecord(
            x: x, y: y, width: w, height: h, interlaced: d[8] & 0x40 != 0,
            localPaletteOffset: localPaletteOffset, localPaletteEntries: localEntries,
            transparentIndex: transparentIndex, disposal: frameControl?.disposal ?? 0,
            duration: GIFGraphicControl.browserDuration(centiseconds: frameControl?.delay ?? 0),
            minCodeSize: 0, dataStart: position, dataEnd: position, isComplete: false)
        var frame = PendingFrame(record: record)
        if !posterDone {
            if canvas.isEmpty { canvas = GIFCanvas.filled(with: initialCanvasValue ?? 0, pixels: width * height) }
            frame.poster = GIFFrameState(
                x: x, y: y, width: w, height: h, interlaced: record.interlaced, palette: palette,
                transparentIndex: transparentIndex, disposal: record.disposal, duration: record.duration,
                canvasWidth: width, canvasHeight: height)
        }
        pending = frame
    }

    private func endFrame() throws {
        state = .blockStart
        guard var frame = pending else { return }
        pending = nil
        if frame.isBroken {
            sawBrokenFrame = true
            return
        }
        frame.record.isComplete = true
        records.append(frame.record)
        try options.checkFrameCount(records.count)
        if let poster = frame.poster {
            GIFCanvas.composite(poster, into: &canvas, width: width, height: height)
            if options.decodeFirstFrameOnly { state = .done }
        }
    }
}

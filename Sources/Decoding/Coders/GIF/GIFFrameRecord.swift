/// One frame of a GIF as the index pass found it: where it goes, how it is drawn and disposed of, and where
/// its LZW data lies in the file. Compositing the frame later decodes that data again; nothing else is kept.
struct GIFFrameRecord: Sendable {
    let x: Int, y: Int, width: Int, height: Int
    let interlaced: Bool
    /// Offset of the local colour table in the file, or nil for the global one (or none).
    let localPaletteOffset: Int?
    let localPaletteEntries: Int
    let transparentIndex: Int?
    let disposal: Int
    /// Seconds, browser rule applied.
    let duration: Double
    /// 1...11 (frames with another value draw nothing and are not recorded).
    let minCodeSize: Int
    /// Offset of the first data sub-block's size byte.
    let dataStart: Int
    /// Offset just past the last complete sub-block (the terminator included when the frame is complete).
    var dataEnd: Int
    /// The frame's data ended with its terminator (false for the last frame of a file cut short).
    var isComplete: Bool

    /// Whether the clipped frame covers the whole canvas of `width`×`height`.
    func coversCanvas(width canvasWidth: Int, height canvasHeight: Int) -> Bool {
        x <= 0 && y <= 0 && x + width >= canvasWidth && y + height >= canvasHeight
    }
}

/// Reads just enough of a frame's LZW data to tell, without decoding it, what decoding it would give at
/// first: a pixel, nothing (an end code), or an invalid code (a broken frame that browsers skip).
struct GIFLZWProbe {
    enum Outcome { case undetermined, pixels, empty, broken }

    private let minCodeSize: Int
    private var bitBuffer: UInt64 = 0
    private var bitCount = 0
    private(set) var outcome = Outcome.undetermined

    init(minCodeSize: Int) {
        self.minCodeSize = minCodeSize
    }

    /// Feeds one sub-block's payload; stops looking once the outcome is known.
    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) {
        let clearCode = 1 << minCodeSize, endCode = clearCode + 1, codeSize = minCodeSize + 1
        var index = 0
        // Before the first pixel only clear codes can come, so the code size never grows here.
        while outcome == .undetermined {
            while bitCount <= 56, index < bytes.count {
                bitBuffer |= UInt64(bytes[index]) << UInt64(bitCount)
                bitCount += 8
                index += 1
            }
            guard bitCount >= codeSize else { return }
            let code = Int(bitBuffer & ((1 << UInt64(codeSize)) - 1))
            bitBuffer >>= UInt64(codeSize)
            bitCount -= codeSize
            if code == clearCode { continue }
            if code == endCode { outcome = .empty } else if code < clearCode { outcome = .pixels } else { outcome = .broken }
        }
    }
}

extension GIFFrameRecord {
    /// The record once its code size byte was read: its data starts at `start`.
    func withData(minCodeSize: Int, start: Int) -> GIFFrameRecord {
        GIFFrameRecord(x: x, y: y, width: width, height: height, interlaced: interlaced,
                       localPaletteOffset: localPaletteOffset, localPaletteEntries: localPaletteEntries,
                       transparentIndex: transparentIndex, disposal: disposal, duration: duration,
                       minCodeSize: minCodeSize, dataStart: start, dataEnd: start, isComplete: false)
    }
}

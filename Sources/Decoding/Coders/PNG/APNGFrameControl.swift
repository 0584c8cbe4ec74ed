import Foundation

/// An APNG fcTL chunk: where a frame goes on the canvas, how long it shows, and how it is blended
/// and disposed of.
struct APNGFrameControl: Equatable {
    enum Dispose: UInt8 { case none = 0, background = 1, previous = 2 }
    enum Blend: UInt8 { case source = 0, over = 1 }

    var width: Int
    var height: Int
    var x: Int
    var y: Int
    var delayNumerator: Int
    var delayDenominator: Int
    var dispose: Dispose
    var blend: Blend

    /// Parses the 26-byte fcTL data; `nil` when short or out of range for a canvas of `canvasWidth`×`canvasHeight`
    /// (an empty frame, one that sticks out of the canvas, or unknown dispose/blend operations).
    init?(_ d: [UInt8], canvasWidth: Int, canvasHeight: Int) {
        guard d.count >= 26 else { return nil }
        func u32(_ i: Int) -> Int { Int(d[i]) << 24 | Int(d[i + 1]) << 16 | Int(d[i + 2]) << 8 | Int(d[i + 3]) }
        func u16(_ i: Int) -> Int { Int(d[i]) << 8 | Int(d[i + 1]) }
        width = u32(4)
        height = u32(8)
        x = u32(12)
        y = u32(16)
        delayNumerator = u16(20)
        delayDenominator = u16(22)
        guard let dispose = Dispose(rawValue: d[24]), let blend = Blend(rawValue: d[25]) else { return nil }
        self.dispose = dispose
        self.blend = blend
        // Each value is below 2^32, so these sums cannot overflow Int.
        guard width > 0, height > 0, x + width <= canvasWidth, y + height <= canvasHeight else { return nil }
    }

    /// Seconds the frame is shown: delay_num / delay_den with a zero denominator meaning 1/100 s, and the
    /// browser rule that under 20 ms means 100 ms (as `ImageFrame` documents).
    var duration: TimeInterval {
        let seconds = Double(delayNumerator) / Double(delayDenominator == 0 ? 100 : delayDenominator)
        return seconds < 0.02 ? 0.1 : seconds
    }

    /// Whether the frame covers the whole canvas from its origin.
    func coversCanvas(width canvasWidth: Int, height canvasHeight: Int) -> Bool {
        x == 0 && y == 0 && width == canvasWidth && height == canvasHeight
    }
}

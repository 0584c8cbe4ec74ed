import Foundation

/// The entropy-coded data of one scan with the byte stuffing removed (FF 00 → FF) and split at restart
/// markers, followed by zero padding so the bit reader can load 8 bytes anywhere without a bounds check.
struct JPEGEntropySegments {
    /// Unstuffed bytes of every segment back to back, then `padding` zero bytes.
    let bytes: [UInt8]
    /// Start offset of each restart segment in `bytes` (the first is 0); `ends[i]` is where it stops.
    let starts: [Int]
    let ends: [Int]
    /// Offset in the original data just after the scan (at the marker that ended it).
    let endOfScan: Int
    /// Whether a marker ended the scan; false when the data simply ran out (a truncated file).
    let terminated: Bool

    /// More than any MCU of the DC path can read past its segment's end (6 blocks × 64 codes × 31 bits).
    static let padding = 2048

    init(_ data: UnsafeRawBufferPointer, from start: Int) {
        var out = [UInt8]()
        out.reserveCapacity(max(0, data.count - start) + Self.padding)
        var starts = [0], ends: [Int] = []
        var i = start
        var terminated = false
        let count = data.count
        guard let base = data.baseAddress else {
            self.bytes = [UInt8](repeating: 0, count: Self.padding)
            self.starts = [0]
            self.ends = [0]
            self.endOfScan = start
            self.terminated = false
            return
        }
        scan: while i < count {
            // Copy up to the next 0xFF in one go.
            let remaining = count - i
            let found = memchr(base + i, 0xFF, remaining)
            let runEnd = found.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
            if runEnd > i {
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: data[i..<runEnd]))
            }
            i = runEnd
            guard i + 1 < count else { i = count; break }
            var next = data[i + 1]
            var j = i + 1
            while next == 0xFF, j + 1 < count {   // fill bytes before a marker
                j += 1
                next = data[j]
            }
            switch next {
            case 0x00:
                out.append(0xFF)
                i = j + 1
            case 0xD0...0xD7:
                ends.append(out.count)
                starts.append(out.count)
                i = j + 1
            default:
                i = j - 1
                terminated = true
                break scan
            }
        }
        ends.append(out.count)
        out.append(contentsOf: repeatElement(0, count: Self.padding))
        self.bytes = out
        self.starts = starts
        self.ends = ends
        self.endOfScan = i
        self.terminated = terminated
    }
}

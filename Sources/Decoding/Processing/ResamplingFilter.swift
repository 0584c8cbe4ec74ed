import Foundation

/// The reconstruction filter of a resize.
///
/// `.lanczos3` is the default: measured against a high-quality reference it is the closest of the three
/// at thumbnail sizes, and with shrink-on-load it is the cheapest step of the pipeline anyway
/// (Docs/Processing.md has the numbers). Every filter works on premultiplied alpha, so transparent pixels
/// never darken or tint the edges of opaque ones.
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable {
    /// Each output pixel is the exact average of the input area it covers (box filter with fractional
    /// coverage). Soft, never rings; what `ImageScaler` uses for decode-time thumbnails.
    case area
    /// Triangle (bilinear when enlarging), support 1 scaled with the reduction.
    case linear
    /// Lanczos with three lobes (Pillow's `LANCZOS`, libvips' `lanczos3`): sharp, slight ringing.
    case lanczos3

    /// Half-width of the kernel in input pixels at scale 1.
    var support: Double {
        switch self {
        case .area: return 0.5
        case .linear: return 1
        case .lanczos3: return 3
        }
    }

    func weight(_ x: Double) -> Double {
        switch self {
        case .area:
            return (x >= -0.5 && x < 0.5) ? 1 : 0
        case .linear:
            let a = abs(x)
            return a < 1 ? 1 - a : 0
        case .lanczos3:
            let a = abs(x)
            guard a < 3 else { return 0 }
            return Self.sinc(a) * Self.sinc(a / 3)
        }
    }

    private static func sinc(_ x: Double) -> Double {
        guard x != 0 else { return 1 }
        let px = Double.pi * x
        return sin(px) / px
    }
}

/// For each output sample of one dimension: the first input sample it reads and its weights (summing to 1).
/// Built once per resize and reused for every row, column and frame. Weights are stored in one flat array,
/// `stride` per output sample (zero-padded), so the inner loops index without indirection.
struct FilterTaps {
    /// First input index per output sample.
    let starts: [Int]
    /// Number of weights used per output sample.
    let counts: [Int]
    /// `starts.count * stride` weights.
    let weights: [Float]
    let stride: Int

    /// The input range every output sample together reads.
    var inputRange: Range<Int> {
        guard let lo = starts.min() else { return 0..<0 }
        var hi = lo
        for (s, c) in zip(starts, counts) { hi = max(hi, s + c) }
        return lo..<hi
    }

    /// Resampling taps: output sample `i` of `outputCount` covers input positions
    /// `[offset + i * scale, offset + (i + 1) * scale)` of an axis `inputCount` samples long.
    /// Weights outside the image are dropped and the rest renormalised (Pillow's and libvips' edge rule).
    static func resampling(filter: ResamplingFilter, inputCount: Int, outputCount: Int,
                           offset: Double, span: Double) -> FilterTaps {
        let scale = span / Double(outputCount)
        if filter == .area { return area(inputCount: inputCount, outputCount: outputCount, offset: offset, scale: scale) }
        let stretch = max(scale, 1)
        let support = filter.support * stretch
        var rows: [(Int, [Double])] = []
        rows.reserveCapacity(outputCount)
        for i in 0..<outputCount {
            let center = offset + (Double(i) + 0.5) * scale
            var lo = Int((center - support + 0.5).rounded(.down))
            var hi = Int((center + support + 0.5).rounded(.down))
            lo = max(lo, 0)
            hi = min(hi, inputCount)
            if hi <= lo {   // far outside (cannot happen for in-image windows); take the nearest edge sample
                lo = min(max(Int(center), 0), inputCount - 1)
                hi = lo + 1
            }
            var ws = (lo..<hi).map { filter.weight((Double($0) + 0.5 - center) / stretch) }
            normalise(&ws)
            rows.append((lo, ws))
        }
        return FilterTaps(rows: rows)
    }

    /// Exact-coverage box taps (area averaging); for enlargement this degrades to nearest/two-tap blending.
    private static func area(inputCount: Int, outputCount: Int, offset: Double, scale: Double) -> FilterTaps {
        var rows: [(Int, [Double])] = []
        rows.reserveCapacity(outputCount)
        for i in 0..<outputCount {
            let lo = max(0, offset + Double(i) * scale), hi = min(Double(inputCount), offset + Double(i + 1) * scale)
            let first = min(max(0, Int(lo.rounded(.down))), inputCount - 1)
            let last = min(max(first, Int(hi.rounded(.up)) - 1), inputCount - 1)
            var ws = (first...last).map { s in max(0, min(hi, Double(s + 1)) - max(lo, Double(s))) }
            normalise(&ws)
            rows.append((first, ws))
        }
        return FilterTaps(rows: rows)
    }

    /// A normalised convolution kernel (odd length, centred) applied at every sample with clamp-to-edge:
    /// weights that fall outside the axis are added to the edge sample.
    static func convolution(kernel: [Double], count: Int) -> FilterTaps {
        let radius = kernel.count / 2
        var rows: [(Int, [Double])] = []
        rows.reserveCapacity(count)
        for i in 0..<count {
            let lo = max(0, i - radius), hi = min(count - 1, i + radius)
            var ws = [Double](repeating: 0, count: hi - lo + 1)
            for (k, w) in kernel.enumerated() {
                let j = min(max(i - radius + k, 0), count - 1)
                ws[j - lo] += w
            }
            rows.append((lo, ws))
        }
        return FilterTaps(rows: rows)
    }

    private static func normalise(_ ws: inout [Double]) {
        let sum = ws.reduce(0, +)
        if sum != 0 { for k in ws.indices { ws[k] /= sum } } else if !ws.isEmpty {
            ws = [Double](repeating: 1 / Double(ws.count), count: ws.count)
        }
    }

    /// Trims zero weights at both ends (Lanczos' zero crossings, coverage slivers) and packs the rows.
    private init(rows: [(Int, [Double])]) {
        var trimmed: [(Int, ArraySlice<Double>)] = []
        trimmed.reserveCapacity(rows.count)
        for (start, ws) in rows {
            var a = ws.startIndex, b = ws.endIndex
            while b - a > 1, ws[a] == 0 { a += 1 }
            while b - a > 1, ws[b - 1] == 0 { b -= 1 }
            trimmed.append((start + a, ws[a..<b]))
        }
        let stride = max(1, trimmed.map { $0.1.count }.max() ?? 1)
        var weights = [Float](repeating: 0, count: trimmed.count * stride)
        for (i, (_, ws)) in trimmed.enumerated() {
            for (k, w) in ws.enumerated() { weights[i * stride + k] = Float(w) }
        }
        self.starts = trimmed.map { $0.0 }
        self.counts = trimmed.map { $0.1.count }
        self.weights = weights
        self.stride = stride
    }
}

import Foundation

/// The shrink-on-load fast path for baseline JPEGs whose thumbnail needs 1/8 scale or less: every block's
/// DC coefficient is its 8×8 mean (what libjpeg's 1/8 scaled IDCT outputs for luma), so only DC values are
/// decoded and the AC coefficients are skipped (`JPEGDCScanner`). About 1.6× faster than libjpeg's own 1/8
/// decode on a 12 MP photo (Docs/Processing.md).
///
/// Luma (and 4:4:4 chroma) is pixel-identical to libjpeg's `scale_denom = 8` output; subsampled chroma
/// comes from its own DC means with a triangle upsampler (libjpeg instead runs a 2×2 IDCT on four
/// coefficients), a difference far below what the thumbnail's resize keeps. Used only when the caller asks
/// for shrink-on-load (`ImageDecodingOptions.shrinkOnLoad`), so exact-size decodes keep libjpeg's pixels.
/// Anything unusual — progressive or arithmetic coding, CMYK, RGB JPEGs, corrupt or truncated data — returns
/// nil and libjpeg decodes the file as before.
enum JPEGDCThumbnailDecoder {
    static func decode(_ data: Data, options: ImageDecodingOptions) -> DecodedImage? {
        guard options.shrinkOnLoad != nil else { return nil }
        return data.withUnsafeBytes { bytes -> DecodedImage? in
            guard let header = JPEGStreamHeader.parse(bytes), isSupported(header),
                  (try? options.checkDimensions(width: header.width, height: header.height)) != nil,
                  JPEGDecompressor.scaleDenominator(width: header.width, height: header.height, options: options) == 8
            else { return nil }
            let segments = JPEGEntropySegments(bytes, from: header.scanDataOffset)
            guard let planes = JPEGDCScanner(header: header).decode(segments) else { return nil }
            return render(planes, header: header)
        }
    }

    /// Sequential Huffman, one scan holding every component, gray or YCbCr.
    private static func isSupported(_ h: JPEGStreamHeader) -> Bool {
        guard !h.progressive, h.spectralStart == 0, h.spectralEnd == 63, h.approximationHigh == 0,
              h.approximationLow == 0, h.scanComponents.count == h.components.count else { return false }
        if h.components.count == 3 {
            // libjpeg treats these as RGB rather than YCbCr: leave them to it.
            if h.adobeTransform == 0 || h.components.map(\.id) == [0x52, 0x47, 0x42] { return false }
        }
        return h.components.allSatisfy { h.dcQuant[$0.quantTable] > 0 }
    }

    /// DC planes → RGBA8 at ⌈width/8⌉ × ⌈height/8⌉.
    private static func render(_ planes: JPEGDCScanner.Planes, header: JPEGStreamHeader) -> DecodedImage {
        let width = (header.width + 7) / 8, height = (header.height + 7) / 8
        let hMax = header.components.map(\.h).max() ?? 1, vMax = header.components.map(\.v).max() ?? 1
        let samples: [[UInt8]] = header.components.indices.map { c in
            let component = header.components[c]
            let quant = Int32(header.dcQuant[component.quantTable])
            let plane = planes.values[c].map { dc -> UInt8 in
                // libjpeg's 1×1 IDCT: DESCALE(dc · q, 3) + 128, range-limited.
                UInt8(clamping: ((dc &* quant &+ 4) >> 3) &+ 128)
            }
            return upsample(plane, wide: planes.blocksWide[c], high: planes.blocksHigh[c],
                            xFactor: hMax / component.h, yFactor: vMax / component.v, width: width, height: height)
        }
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        pixels.withUnsafeMutableBufferPointer { out in
            if samples.count == 1 {
                samples[0].withUnsafeBufferPointer { y in
                    for i in 0..<(width * height) {
                        out[4 * i] = y[i]; out[4 * i + 1] = y[i]; out[4 * i + 2] = y[i]
                    }
                }
            } else {
                YCbCrTables.shared.convert(samples[0], samples[1], samples[2], count: width * height, into: out)
            }
        }
        return DecodedImage(width: width, height: height, pixels: pixels, format: .jpeg, orientation: header.orientation)
    }

    /// A component's samples (one per block) brought to the output grid: cropped, and doubled where the
    /// component is subsampled, with a triangle filter (3/4 nearer sample, 1/4 the other), like libjpeg's
    /// "fancy" upsampling.
    private static func upsample(_ plane: [UInt8], wide: Int, high: Int, xFactor: Int, yFactor: Int,
                                 width: Int, height: Int) -> [UInt8] {
        // Per output column (row): the nearer and the other source column (row).
        let columns = (0..<width).map { neighbours($0, factor: xFactor, count: wide) }
        let rows = (0..<height).map { neighbours($0, factor: yFactor, count: high) }
        return [UInt8](unsafeUninitializedCapacity: width * height) { out, initialized in
            plane.withUnsafeBufferPointer { p in
                columns.withUnsafeBufferPointer { cols in
                    guard let source = p.baseAddress, let target = out.baseAddress else { return }
                    for y in 0..<height {
                        let near = source + rows[y].0 * wide, far = source + rows[y].1 * wide
                        let o = target + y * width
                        if xFactor == 1 && yFactor == 1 {
                            o.initialize(from: near, count: width)
                            continue
                        }
                        for x in 0..<width {
                            let (x0, x1) = cols[x]
                            // Weights 3:1 in each doubled direction (a factor of 1 names the same sample twice).
                            let s = 9 &* Int(near[x0]) &+ 3 &* Int(near[x1]) &+ 3 &* Int(far[x0]) &+ Int(far[x1])
                            o[x] = UInt8(truncatingIfNeeded: (s &+ 8) >> 4)
                        }
                    }
                }
            }
            initialized = width * height
        }
    }

    /// The nearer and the other source sample of output position `i` when upsampling by `factor` (1 or 2).
    private static func neighbours(_ i: Int, factor: Int, count: Int) -> (Int, Int) {
        guard factor == 2 else { let s = min(i, count - 1); return (s, s) }
        let s = min(i / 2, count - 1)
        let other = i % 2 == 0 ? max(s - 1, 0) : min(s + 1, count - 1)
        return (s, other)
    }
}

/// libjpeg's YCbCr → RGB fixed-point tables (jdcolor.c), so gray and 4:4:4 output match it exactly.
final class YCbCrTables: Sendable {
    static let shared = YCbCrTables()
    private let crR: [Int32], cbB: [Int32], crG: [Int32], cbG: [Int32]

    private init() {
        let one = 1 << 16, half = Int32(1 << 15)
        func fix(_ x: Double) -> Int32 { Int32((x * Double(one) + 0.5).rounded(.down)) }
        crR = (0..<256).map { (fix(1.40200) * Int32($0 - 128) + half) >> 16 }
        cbB = (0..<256).map { (fix(1.77200) * Int32($0 - 128) + half) >> 16 }
        crG = (0..<256).map { -fix(0.71414) * Int32($0 - 128) }
        cbG = (0..<256).map { -fix(0.34414) * Int32($0 - 128) + half }
    }

    func convert(_ y: [UInt8], _ cb: [UInt8], _ cr: [UInt8], count: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
        guard y.count >= count, cb.count >= count, cr.count >= count, out.count >= count * 4 else { return }
        y.withUnsafeBufferPointer { y in cb.withUnsafeBufferPointer { cb in cr.withUnsafeBufferPointer { cr in
        crR.withUnsafeBufferPointer { crR in cbB.withUnsafeBufferPointer { cbB in
        crG.withUnsafeBufferPointer { crG in cbG.withUnsafeBufferPointer { cbG in
            for i in 0..<count {
                let l = Int32(y[i]), b = Int(cb[i]), r = Int(cr[i])
                out[4 &* i] = UInt8(clamping: l &+ crR[r])
                out[4 &* i &+ 1] = UInt8(clamping: l &+ ((cbG[b] &+ crG[r]) >> 16))
                out[4 &* i &+ 2] = UInt8(clamping: l &+ cbB[b])
            }
        } } } } } } }
    }
}

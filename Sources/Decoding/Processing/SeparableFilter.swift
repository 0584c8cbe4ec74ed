import Foundation

/// The engine behind resizing and blurring: a separable filter over RGBA8, run in premultiplied
/// `SIMD4<Float>` so transparent pixels carry no colour into their neighbours.
///
/// Rows are filtered horizontally once each, into a ring of `yTaps.stride` rows, and every output row is
/// the weighted sum of the ring rows it needs: memory is a few rows, whatever the image size, and each input
/// pixel is converted to float exactly once. Weights come precomputed from `FilterTaps`; the inner loops
/// are plain multiply-adds on `SIMD4<Float>`, with no allocation and no bounds checks.
struct SeparableFilter {
    let srcWidth: Int
    let srcHeight: Int
    let xTaps: FilterTaps
    let yTaps: FilterTaps
    /// Filter in linear light (sRGB decoded before, encoded after) instead of on the encoded values.
    var linearLight = false

    var dstWidth: Int { xTaps.starts.count }
    var dstHeight: Int { yTaps.starts.count }

    /// Filters one RGBA8 straight-alpha buffer of `srcWidth * srcHeight * 4` bytes.
    func run(_ src: [UInt8]) -> [UInt8] {
        let count = dstWidth * dstHeight * 4
        return [UInt8](unsafeUninitializedCapacity: count) { dst, initialized in
            src.withUnsafeBufferPointer { s in
                if let input = s.baseAddress, let output = dst.baseAddress, s.count >= srcWidth * srcHeight * 4 {
                    run(input, output)
                } else {
                    dst.initialize(repeating: 0)
                }
            }
            initialized = count
        }
    }

    private func run(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>) {
        let dw = dstWidth
        let columns = xTaps.inputRange
        let ringRows = max(1, yTaps.stride)
        let ring = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: ringRows * dw)
        let line = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: max(1, columns.count))
        let acc = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: dw)
        var cached = [Int](repeating: -1, count: ringRows)  // the source row held by each ring slot
        defer {
            ring.deallocate()
            line.deallocate()
            acc.deallocate()
        }
        let toLinear = linearLight ? SRGBTables.shared.toLinear : nil
        let toEncoded = linearLight ? SRGBTables.shared.toEncoded : nil
        xTaps.starts.withUnsafeBufferPointer { xs in
        xTaps.counts.withUnsafeBufferPointer { xc in
        xTaps.weights.withUnsafeBufferPointer { xw in
        yTaps.weights.withUnsafeBufferPointer { yw in
            for y in 0..<dstHeight {
                let first = yTaps.starts[y], taps = yTaps.counts[y]
                for k in 0..<taps {
                    let row = first + k, slot = row % ringRows
                    guard cached[slot] != row else { continue }
                    Self.loadPremultiplied(src + (row * srcWidth + columns.lowerBound) * 4, count: columns.count,
                                           into: line, toLinear: toLinear)
                    Self.horizontal(line - columns.lowerBound, starts: xs, counts: xc, weights: xw,
                                    stride: xTaps.stride, into: ring + slot * dw)
                    cached[slot] = row
                }
                acc.initialize(repeating: SIMD4<Float>(), count: dw)
                for k in 0..<taps {
                    let weight = yw[y * yTaps.stride + k]
                    let source = ring + ((first + k) % ringRows) * dw
                    for x in 0..<dw { acc[x] += source[x] * weight }
                }
                Self.storeStraight(acc, count: dw, into: dst + y * dw * 4, toEncoded: toEncoded)
            }
        }
        }
        }
        }
    }

    /// RGBA8 straight → premultiplied floats: (r·a/255, g·a/255, b·a/255, a), colour optionally linearised.
    @inline(__always)
    private static func loadPremultiplied(_ p: UnsafePointer<UInt8>, count: Int, into line: UnsafeMutablePointer<SIMD4<Float>>,
                                          toLinear: [Float]?) {
        if let toLinear {
            toLinear.withUnsafeBufferPointer { lut in
                for i in 0..<count {
                    let q = p + i * 4
                    let a = Float(q[3])
                    line[i] = SIMD4(lut[Int(q[0])], lut[Int(q[1])], lut[Int(q[2])], 1) * SIMD4(a / 255, a / 255, a / 255, a)
                }
            }
            return
        }
        // Element-wise conversions: the generic SIMD conversion initialisers are not specialised (slow).
        for i in 0..<count {
            let q = p + i * 4
            let v = SIMD4<Float>(Float(q[0]), Float(q[1]), Float(q[2]), Float(q[3]))
            let a = v.w * (1 / 255)
            line[i] = v * SIMD4(a, a, a, 1)
        }
    }

    @inline(__always)
    private static func horizontal(_ line: UnsafeMutablePointer<SIMD4<Float>>, starts: UnsafeBufferPointer<Int>,
                                   counts: UnsafeBufferPointer<Int>, weights: UnsafeBufferPointer<Float>, stride: Int,
                                   into out: UnsafeMutablePointer<SIMD4<Float>>) {
        guard let w = weights.baseAddress else { return }
        for o in 0..<starts.count {
            let source = line + starts[o]
            let ws = w + o * stride
            var sum = SIMD4<Float>()
            for k in 0..<counts[o] { sum += source[k] * ws[k] }
            out[o] = sum
        }
    }

    /// Premultiplied floats → RGBA8 straight alpha, clamped and rounded (Lanczos overshoots both ways).
    @inline(__always)
    private static func storeStraight(_ acc: UnsafeMutablePointer<SIMD4<Float>>, count: Int, into p: UnsafeMutablePointer<UInt8>,
                                      toEncoded: [UInt8]?) {
        let zero = SIMD4<Float>(repeating: 0), top = SIMD4<Float>(repeating: 255), half = SIMD4<Float>(repeating: 0.5)
        for x in 0..<count {
            let v = acc[x]
            let a = min(max(v.w, 0), 255)
            var out = SIMD4<Float>(0, 0, 0, a)
            if a >= 0.5 {
                let unpremultiplied = v * (255 / a)
                out = SIMD4(unpremultiplied.x, unpremultiplied.y, unpremultiplied.z, a)
            }
            out = out.clamped(lowerBound: zero, upperBound: top) + half
            if let toEncoded {
                toEncoded.withUnsafeBufferPointer { lut in
                    let scale = Float(SRGBTables.encodedSteps - 1) / 255
                    let q = p + x * 4
                    q[0] = lut[Int(min(max(unpremultiplied(v.x, a), 0), 255) * scale)]
                    q[1] = lut[Int(min(max(unpremultiplied(v.y, a), 0), 255) * scale)]
                    q[2] = lut[Int(min(max(unpremultiplied(v.z, a), 0), 255) * scale)]
                    q[3] = UInt8(out.w)
                }
            } else {
                // In 0.5...255.5 after the clamp: truncation rounds half up.
                let q = p + x * 4
                q[0] = UInt8(out.x)
                q[1] = UInt8(out.y)
                q[2] = UInt8(out.z)
                q[3] = UInt8(out.w)
            }
        }
    }

    @inline(__always)
    private static func unpremultiplied(_ c: Float, _ a: Float) -> Float {
        a >= 0.5 ? c * 255 / a : 0
    }
}

/// sRGB transfer-function tables for linear-light filtering: 8-bit encoded → linear (0...255 scale), and
/// linear (quantised to `encodedSteps`) → 8-bit encoded.
final class SRGBTables: Sendable {
    static let shared = SRGBTables()
    static let encodedSteps = 4096

    let toLinear: [Float]
    let toEncoded: [UInt8]

    private init() {
        toLinear = (0..<256).map { i in
            let c = Double(i) / 255
            return Float(255 * (c <= 0.04045 ? c / 12.92 : Foundation.pow((c + 0.055) / 1.055, 2.4)))
        }
        toEncoded = (0..<Self.encodedSteps).map { i in
            let l = Double(i) / Double(Self.encodedSteps - 1)
            let c = l <= 0.0031308 ? l * 12.92 : 1.055 * Foundation.pow(l, 1 / 2.4) - 0.055
            return UInt8(max(0, min(255, (c * 255).rounded())))
        }
    }
}

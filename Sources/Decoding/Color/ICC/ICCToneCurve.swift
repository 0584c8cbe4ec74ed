import Foundation

/// A TRC tag (`curv` or `para`, ICC.1:2010 §10.6 and §10.18), evaluated as lcms2 evaluates it (cmsgamma.c):
/// parametric curves in double precision, sampled curves through lcms2's 16-bit linear interpolation, results
/// rounded to Float as `cmsEvalToneCurveFloat` returns them. So the fast path's tables match lcms2's own.
enum ICCToneCurve: Equatable {
    /// `curv` with one entry, or `para` type 0: Y = X^gamma.
    case gamma(Double)
    /// `para` types 1...4: ICC function type and its parameters (g, a, b, c, d, e, f as present).
    case parametric(type: Int, parameters: [Double])
    /// `curv` with 0 entries (identity) or 2 or more (sampled 0...65535 over 0...1).
    case sampled([UInt16])

    /// The sRGB curve (IEC 61966-2-1), as lcms2's `cmsCreate_sRGBProfile` builds it.
    static let sRGB = ICCToneCurve.parametric(type: 3, parameters: [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])

    /// Parameters per `para` function type.
    private static let parameterCounts = [1, 3, 4, 5, 7]
    /// Sampled curves longer than this are refused (lcms2 allows 65530; real profiles have up to 4096).
    static let maximumSamples = 65_536

    init(_ tag: ICCByteReader, name: String) throws(ICCProfileError) {
        switch tag.typeSignature {
        case ICCProfile.Signature("curv"):
            guard let count = tag.uint32(at: 8).map(Int.init), count <= Self.maximumSamples,
                  tag.count >= 12 + 2 * count else { throw .malformedTag(name) }
            if count == 1 {
                guard let raw = tag.uint16(at: 12) else { throw .malformedTag(name) }
                self = .gamma(Double(raw) / 256)  // u8Fixed8Number
                return
            }
            let samples = count == 0 ? [0, 65535] : (0..<count).map { tag.uint16(at: 12 + 2 * $0) ?? 0 }
            self = .sampled(samples)
        case ICCProfile.Signature("para"):
            guard let type = tag.uint16(at: 8).map(Int.init), type < Self.parameterCounts.count else {
                throw .malformedTag(name)
            }
            var parameters: [Double] = []
            for index in 0..<Self.parameterCounts[type] {
                guard let value = tag.s15Fixed16(at: 12 + 4 * index) else { throw .malformedTag(name) }
                parameters.append(value)
            }
            self = type == 0 ? .gamma(parameters[0]) : .parametric(type: type, parameters: parameters)
        default:
            throw .malformedTag(name)
        }
    }

    /// The curve at `x` (0...1), as lcms2's `cmsEvalToneCurveFloat` gives it (NaN and infinities included;
    /// callers decide what is usable).
    func evaluate(_ x: Float) -> Float {
        switch self {
        case .gamma(let g):
            return Float(Self.lcmsParametric(1, [g], Double(x)))
        case .parametric(let type, let parameters):
            return Float(Self.lcmsParametric(type + 1, parameters, Double(x)))
        case .sampled(let table):
            return Float(Double(Self.lerp16(table, Self.saturateWord(Double(x) * 65535))) / 65535)
        }
    }

    /// lcms2's DefaultEvalParametricFn for its types 1...5 (ICC types 0...4), forward direction.
    private static func lcmsParametric(_ type: Int, _ p: [Double], _ r: Double) -> Double {
        let tolerance = 0.0001  // MATRIX_DET_TOLERANCE
        switch type {
        case 1:
            if r < 0 { return abs(p[0] - 1) < tolerance ? r : 0 }
            return pow(r, p[0])
        case 2:
            guard abs(p[1]) >= tolerance else { return 0 }
            guard r >= -p[2] / p[1] else { return 0 }
            let e = p[1] * r + p[2]
            return e > 0 ? pow(e, p[0]) : 0
        case 3:
            guard abs(p[1]) >= tolerance else { return 0 }
            guard r >= max(0, -p[2] / p[1]) else { return p[3] }
            let e = p[1] * r + p[2]
            return e > 0 ? pow(e, p[0]) + p[3] : 0
        case 4:
            guard r >= p[4] else { return r * p[3] }
            let e = p[1] * r + p[2]
            return e > 0 ? pow(e, p[0]) : 0
        default:
            guard r >= p[4] else { return r * p[3] + p[6] }
            let e = p[1] * r + p[2]
            return e > 0 ? pow(e, p[0]) + p[5] : p[5]
        }
    }

    /// lcms2's _cmsQuickSaturateWord: round half up, clamped to 0...65535.
    static func saturateWord(_ value: Double) -> UInt16 {
        let v = value + 0.5
        guard v > 0 else { return 0 }  // NaN lands here too
        guard v < 65535 else { return 65535 }
        return UInt16(v.rounded(.down))
    }

    /// lcms2's LinLerp1D: 16-bit linear interpolation in a table over 0...65535, in its fixed-point steps.
    private static func lerp16(_ table: [UInt16], _ value: UInt16) -> UInt16 {
        let domain = table.count - 1
        guard domain > 0 else { return table.first ?? 0 }
        if value == 0xFFFF { return table[domain] }
        var v = domain * Int(value)
        v += (v + 0x7FFF) / 0xFFFF  // _cmsToFixedDomain
        let cell = v >> 16, rest = v & 0xFFFF
        guard cell + 1 <= domain else { return table[domain] }
        let y0 = Int(table[cell]), y1 = Int(table[cell + 1])
        return UInt16(truncatingIfNeeded: (((y1 - y0) * rest + 0x8000) >> 16) + y0)
    }
}

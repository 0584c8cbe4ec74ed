import Foundation

extension MatrixTRCProfile {
    /// How far a colorant (XYZ, each component) or a curve (at 33 points over 0...1) may be from sRGB's for a
    /// profile to count as sRGB. At 0.002 no 8-bit value moves by more than about half a level, which covers
    /// the common sRGB IEC61966-2.1 variants (HP's 1024-point curve, the parametric v4 and compact v2 profiles,
    /// cameras' and phones' copies) and PNG's gAMA 0.45455 with sRGB's cHRM.
    static let sRGBTolerance = 0.002

    /// True when converting to sRGB would change nothing visible: sRGB's colorants (D50-adapted as lcms2
    /// builds them) and sRGB's curve, or for gray, sRGB's curve.
    var isSRGBEquivalent: Bool {
        let sRGBCurve = (0...32).map { Double(ICCToneCurve.sRGB.evaluate(Float($0) / 32)) }
        let curvesMatch = (isGray ? [curves[0]] : curves).allSatisfy { curve in
            (0...32).allSatisfy { i in
                let value = Double(curve.evaluate(Float(i) / 32))
                return value.isFinite && abs(value - sRGBCurve[i]) <= Self.sRGBTolerance
            }
        }
        guard curvesMatch else { return false }
        if isGray { return true }
        return zip(toPCS.m, ColorMatrix3.sRGBToD50.m).allSatisfy { abs($0 - $1) <= Self.sRGBTolerance }
    }
}

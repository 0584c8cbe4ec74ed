import Foundation

/// A 3×3 matrix of doubles (row-major), with what colour conversion needs: products, the inverse, and
/// lcms2's construction of RGB-to-XYZ matrices from chromaticities with Bradford adaptation to D50 (cmswtpnt.c).
struct ColorMatrix3: Equatable {
    var m: [Double]

    init(_ m: [Double]) {
        precondition(m.count == 9)  // internal construction only, never from input
        self.m = m
    }

    /// Columns given as vectors (an ICC profile's rXYZ, gXYZ, bXYZ colorants).
    init(columns a: [Double], _ b: [Double], _ c: [Double]) {
        self.init([a[0], b[0], c[0], a[1], b[1], c[1], a[2], b[2], c[2]])
    }

    static let identity = ColorMatrix3([1, 0, 0, 0, 1, 0, 0, 0, 1])
    /// The ICC PCS illuminant as lcms2 defines it (cmsD50X/Y/Z).
    static let d50: [Double] = [0.9642, 1.0, 0.8249]
    /// Bradford cone response matrix (lcms2's default for chromatic adaptation).
    static let bradford = ColorMatrix3([0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296])

    subscript(row: Int, column: Int) -> Double { m[row * 3 + column] }

    static func * (a: ColorMatrix3, b: ColorMatrix3) -> ColorMatrix3 {
        var r = [Double](repeating: 0, count: 9)
        for i in 0..<3 {
            for j in 0..<3 { r[i * 3 + j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j] }
        }
        return ColorMatrix3(r)
    }

    func applied(to v: [Double]) -> [Double] {
        (0..<3).map { self[$0, 0] * v[0] + self[$0, 1] * v[1] + self[$0, 2] * v[2] }
    }

    var isFinite: Bool { m.allSatisfy(\.isFinite) }

    /// The inverse, or nil when the matrix is singular by lcms2's tolerance (_cmsMAT3inverse).
    var inverse: ColorMatrix3? {
        let c0 = self[1, 1] * self[2, 2] - self[1, 2] * self[2, 1]
        let c1 = -self[1, 0] * self[2, 2] + self[1, 2] * self[2, 0]
        let c2 = self[1, 0] * self[2, 1] - self[1, 1] * self[2, 0]
        let det = self[0, 0] * c0 + self[0, 1] * c1 + self[0, 2] * c2
        guard det.isFinite, abs(det) >= 0.0001 else { return nil }
        let r = [
            c0 / det,
            (self[0, 2] * self[2, 1] - self[0, 1] * self[2, 2]) / det,
            (self[0, 1] * self[1, 2] - self[0, 2] * self[1, 1]) / det,
            c1 / det,
            (self[0, 0] * self[2, 2] - self[0, 2] * self[2, 0]) / det,
            (self[0, 2] * self[1, 0] - self[0, 0] * self[1, 2]) / det,
            c2 / det,
            (self[0, 1] * self[2, 0] - self[0, 0] * self[2, 1]) / det,
            (self[0, 0] * self[1, 1] - self[0, 1] * self[1, 0]) / det,
        ]
        let inverse = ColorMatrix3(r)
        return inverse.isFinite ? inverse : nil
    }

    /// XYZ (Y = 1) of a CIE xy chromaticity.
    static func xyz(x: Double, y: Double) -> [Double] { [x / y, 1, (1 - x - y) / y] }

    /// Bradford adaptation from white `source` to white `destination` (XYZ), as lcms2's _cmsAdaptationMatrix.
    static func bradfordAdaptation(from source: [Double], to destination: [Double]) -> ColorMatrix3? {
        let coneSource = bradford.applied(to: source), coneDestination = bradford.applied(to: destination)
        guard coneSource.allSatisfy({ $0 != 0 && $0.isFinite }), let back = bradford.inverse else { return nil }
        let scale = ColorMatrix3([coneDestination[0] / coneSource[0], 0, 0,
                                  0, coneDestination[1] / coneSource[1], 0,
                                  0, 0, coneDestination[2] / coneSource[2]])
        return back * (scale * bradford)
    }

    /// RGB to PCS XYZ (D50) for primaries and a white point given as CIE xy (white, red, green, blue: the order
    /// of PNG's cHRM), adapted to D50 with Bradford: the colorants lcms2's `cmsCreateRGBProfile` writes
    /// (_cmsBuildRGB2XYZtransferMatrix). nil for degenerate chromaticities.
    static func rgbToD50(chromaticities xy: [Double]) -> ColorMatrix3? {
        guard xy.count == 8, xy.allSatisfy({ $0.isFinite && $0 > 0 && $0 < 1 }) else { return nil }
        let (xn, yn) = (xy[0], xy[1])
        let (xr, yr, xg, yg, xb, yb) = (xy[2], xy[3], xy[4], xy[5], xy[6], xy[7])
        let primaries = ColorMatrix3([xr, xg, xb, yr, yg, yb, 1 - xr - yr, 1 - xg - yg, 1 - xb - yb])
        guard let inverse = primaries.inverse else { return nil }
        let white = xyz(x: xn, y: yn)
        let coefficients = inverse.applied(to: white)
        let unadapted = ColorMatrix3([
            coefficients[0] * xr, coefficients[1] * xg, coefficients[2] * xb,
            coefficients[0] * yr, coefficients[1] * yg, coefficients[2] * yb,
            coefficients[0] * (1 - xr - yr), coefficients[1] * (1 - xg - yg), coefficients[2] * (1 - xb - yb),
        ])
        guard let adaptation = bradfordAdaptation(from: white, to: d50) else { return nil }
        let result = adaptation * unadapted
        return result.isFinite ? result : nil
    }

    /// sRGB's colorants as lcms2 builds them (Rec. 709 primaries, D65 white 0.3127/0.3290, Bradford to D50).
    static let sRGBToD50: ColorMatrix3 = rgbToD50(chromaticities: [0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06]) ?? identity
}

import Foundation

/// An RGB (or gray) colour space described by three tone curves and a 3×3 matrix to PCS XYZ (D50): what most
/// profiles on the web are (sRGB variants, Display P3, Adobe RGB, ProPhoto, camera and phone profiles), and
/// what PNG gAMA/cHRM and HEIF nclx describe. `MatrixTRCTransform` converts it to sRGB without lcms2.
///
/// From an ICC profile it takes exactly what lcms2 uses for the perceptual and relative intents of such a
/// profile (cmsio1.c): rXYZ/gXYZ/bXYZ as the matrix columns and rTRC/gTRC/bTRC (or kTRC with the D50 white for
/// gray), and it refuses what would make lcms2 do something else, so lcms2 keeps those: any A2Bx/D2Bx table
/// (lcms2 prefers them), a Lab PCS, a device class lcms2 would not use as input, and curves that do not start
/// at black (lcms2 then applies black-point compensation, forced for v4 perceptual with sRGB as output). The
/// media white point (wtpt) and adaptation matrix (chad) are read and checked but, as in lcms2's relative
/// intent, do not enter the matrix: colorants are already adapted to D50.
struct MatrixTRCProfile {
    /// Linear RGB to PCS XYZ (D50). For gray, the first column is the D50 white and the others are zero.
    let toPCS: ColorMatrix3
    /// The three channels' curves (gray: the same curve three times; only the first is used).
    let curves: [ICCToneCurve]
    let isGray: Bool
    /// wtpt and chad when the profile has them (reported, not used in the matrix).
    let mediaWhitePoint: [Double]?
    let adaptation: ColorMatrix3?

    /// A curve's value at black above this makes lcms2 compensate the black point: not for the fast path.
    static let blackTolerance: Float = 1e-5

    init(_ profile: ICCProfile) throws(ICCProfileError) {
        let classes: [ICCProfile.Signature] = [.init("scnr"), .init("mntr"), .init("prtr"), .init("spac")]
        guard classes.contains(profile.deviceClass) else {
            throw .notMatrixTRC("device class '\(profile.deviceClass)'")
        }
        guard profile.connectionSpace == ICCProfile.Signature("XYZ ") else {
            throw .notMatrixTRC("connection space '\(profile.connectionSpace)'")
        }
        for lut in ["A2B0", "A2B1", "A2B2", "D2B0", "D2B1", "D2B2"] where profile.has(.init(lut)) {
            throw .notMatrixTRC("has a '\(lut)' table")
        }
        mediaWhitePoint = try profile.tag(.init("wtpt")).map { tag throws(ICCProfileError) in try Self.xyz(tag, name: "wtpt") }
        adaptation = try profile.tag(.init("chad")).map { tag throws(ICCProfileError) in try Self.chad(tag) }
        switch profile.colorSpace {
        case ICCProfile.Signature("RGB "):
            let columns = try ["rXYZ", "gXYZ", "bXYZ"].map { name throws(ICCProfileError) in
                try Self.xyz(try Self.required(profile, name), name: name)
            }
            toPCS = ColorMatrix3(columns: columns[0], columns[1], columns[2])
            curves = try ["rTRC", "gTRC", "bTRC"].map { name throws(ICCProfileError) in
                try ICCToneCurve(try Self.required(profile, name), name: name)
            }
            isGray = false
        case ICCProfile.Signature("GRAY"):
            let curve = try ICCToneCurve(try Self.required(profile, "kTRC"), name: "kTRC")
            toPCS = ColorMatrix3(columns: ColorMatrix3.d50, [0, 0, 0], [0, 0, 0])
            curves = [curve, curve, curve]
            isGray = true
        default:
            throw .notMatrixTRC("colour space '\(profile.colorSpace)'")
        }
        guard toPCS.isFinite else { throw .unusableMatrix }
        try checkBlack()
    }

    /// RGB from chromaticities (white, red, green, blue as CIE xy) and a decoding gamma (0: the sRGB curve), as
    /// lcms2's `cmsCreateRGBProfile` builds it for PNG cHRM/gAMA and HEIF nclx.
    init(chromaticities xy: [Double], gamma: Double) throws(ICCProfileError) {
        guard let matrix = ColorMatrix3.rgbToD50(chromaticities: xy) else { throw .unusableMatrix }
        guard gamma.isFinite, gamma <= 10 else { throw .unusableCurve("gamma \(gamma)") }
        let curve = gamma > 0 ? ICCToneCurve.gamma(gamma) : .sRGB
        toPCS = matrix
        curves = [curve, curve, curve]
        isGray = false
        mediaWhitePoint = nil
        adaptation = nil
        try checkBlack()
    }

    private func checkBlack() throws(ICCProfileError) {
        for curve in curves {
            let black = curve.evaluate(0)
            guard black.isFinite else { throw .unusableCurve("black is not finite") }
            if black > Self.blackTolerance { throw .notMatrixTRC("curve does not start at black (\(black))") }
        }
    }

    private static func required(_ profile: ICCProfile, _ name: String) throws(ICCProfileError) -> ICCByteReader {
        guard let tag = profile.tag(.init(name)) else { throw .missingTag(name) }
        return tag
    }

    /// An XYZType tag's first value.
    private static func xyz(_ tag: ICCByteReader, name: String) throws(ICCProfileError) -> [Double] {
        guard tag.typeSignature == ICCProfile.Signature("XYZ "),
              let x = tag.s15Fixed16(at: 8), let y = tag.s15Fixed16(at: 12), let z = tag.s15Fixed16(at: 16) else {
            throw .malformedTag(name)
        }
        return [x, y, z]
    }

    /// chad: an s15Fixed16ArrayType of 9 values that must be invertible.
    private static func chad(_ tag: ICCByteReader) throws(ICCProfileError) -> ColorMatrix3 {
        guard tag.typeSignature == ICCProfile.Signature("sf32") else { throw .malformedTag("chad") }
        var values: [Double] = []
        for index in 0..<9 {
            guard let value = tag.s15Fixed16(at: 8 + 4 * index) else { throw .malformedTag("chad") }
            values.append(value)
        }
        let matrix = ColorMatrix3(values)
        guard matrix.inverse != nil else { throw .malformedTag("chad") }
        return matrix
    }
}

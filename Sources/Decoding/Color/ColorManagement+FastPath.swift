import Foundation

extension ColorManagement {
    /// The matrix/TRC fast path for `key` (no lcms2 involved), or nil when lcms2 must decide: CMYK samples, a
    /// profile the ICC reader refuses (`ICCProfileError`: LUT-based, Lab PCS, malformed, a black point lcms2
    /// would compensate). An sRGB-equivalent colour space resolves to `.identity`.
    static func fastPath(_ key: TransformKey) -> Resolution? {
        switch key {
        case .icc(let bytes, let cmyk):
            guard cmyk == nil else { return nil }
            return try? matrixResolution(icc: bytes)
        case .chromaticities(let xy, let gamma, let description):
            guard let profile = try? MatrixTRCProfile(chromaticities: xy, gamma: gamma) else { return nil }
            return try? matrixResolution(profile, description: description)
        }
    }

    /// The fast path's decision for an ICC profile, with the reason when it does not take it.
    static func matrixResolution(icc bytes: Data) throws(ICCProfileError) -> Resolution {
        let icc = try ICCProfile(bytes)
        let profile = try MatrixTRCProfile(icc)
        let name = icc.name
        return try matrixResolution(profile, description: name.isEmpty ? "ICC profile (\(bytes.count) bytes)" : "ICC profile '\(name)'")
    }

    private static func matrixResolution(_ profile: MatrixTRCProfile, description: String) throws(ICCProfileError) -> Resolution {
        if profile.isSRGBEquivalent { return .identity }
        return .matrix(try MatrixTRCTransform(profile, description: description))
    }
}

import CImageCodecs
import Foundation

extension ColorManagement {
    /// Builds the transform for `key` with lcms2 loaded from `soname` (tests name a missing one), uncached.
    static func resolveWithLCMS(_ key: TransformKey, soname: String) -> Resolution {
        let lib: LibLCMS
        switch LibLCMS.load(soname) {
        case .success(let loaded): lib = loaded
        case .failure(let error): return .failure("no colour management: \(error.description) (install liblcms2-2)")
        }
        switch key {
        case .icc(let bytes, let cmyk):
            let profile = bytes.withUnsafeBytes { cic_lcms_open_icc(lib.api, $0.baseAddress, $0.count) }
            guard let profile else { return .failure("unreadable ICC profile (\(bytes.count) bytes)") }
            defer { cic_lcms_close_profile(lib.api, profile) }
            var name = [CChar](repeating: 0, count: 128)
            cic_lcms_description(lib.api, profile, &name, name.count)
            let embeddedName = stringFromCBuffer(name)
            let description = embeddedName.isEmpty ? "ICC profile (\(bytes.count) bytes)" : "ICC profile '\(embeddedName)'"
            let input: cic_lcms_input
            switch (cic_lcms_profile_space(lib.api, profile), cmyk) {
            case (CIC_LCMS_RGB, nil): input = CIC_LCMS_IN_RGBA
            case (CIC_LCMS_GRAY, nil): input = CIC_LCMS_IN_GRAY_IN_RGBA
            case (CIC_LCMS_CMYK, true?): input = CIC_LCMS_IN_CMYK_INVERTED
            case (CIC_LCMS_CMYK, false?): input = CIC_LCMS_IN_CMYK
            default: return .failure("\(description) does not describe the decoded pixels' colour space")
            }
            if cmyk == nil && cic_lcms_is_srgb_equivalent(lib.api, profile) != 0 { return .identity }
            guard let transform = cic_lcms_create_transform(lib.api, profile, input) else {
                return .failure("lcms2 cannot build a transform from \(description)")
            }
            return .transform(ColorTransform(lib: lib, handle: transform, description: description))
        case .chromaticities(let xy, let gamma, let description):
            guard xy.count == 8, let profile = xy.withUnsafeBufferPointer({ cic_lcms_create_rgb(lib.api, $0.baseAddress, gamma) }) else {
                return .failure("unusable colour description (\(description))")
            }
            defer { cic_lcms_close_profile(lib.api, profile) }
            if cic_lcms_is_srgb_equivalent(lib.api, profile) != 0 { return .identity }
            guard let transform = cic_lcms_create_transform(lib.api, profile, CIC_LCMS_IN_RGBA) else {
                return .failure("lcms2 cannot build a transform from \(description)")
            }
            return .transform(ColorTransform(lib: lib, handle: transform, description: description))
        }
    }
}

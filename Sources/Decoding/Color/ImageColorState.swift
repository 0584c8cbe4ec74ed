import Foundation

/// What colour management did to a decoded image's pixels.
public enum ImageColorState: Sendable, Equatable {
    /// The file carries no colour information, or one equivalent to sRGB: the pixels are sRGB as decoded.
    case sRGB
    /// The pixels were converted to sRGB from the colour space named here (for example
    /// "ICC profile 'Adobe RGB (1998)'" or "PNG gAMA 1.00000").
    case convertedToSRGB(from: String)
    /// The pixels are as decoded, in the image's own colour space (its `iccProfile` when it has one), and
    /// `reason` says why: kept by `ImageColorManagement.keepOriginal`, lcms2 not installed, or an unusable profile.
    case notConverted(reason: String)

    /// What a coder records next to the colour information it found: `ImageCodersManager` converts afterwards.
    static let awaitingConversion = ImageColorState.notConverted(
        reason: "not converted by the coder alone (ImageCodersManager converts)")

    /// True when the pixels can be shown as sRGB: untagged, sRGB already, or converted.
    public var isSRGB: Bool {
        if case .notConverted = self { return false }
        return true
    }
}

/// Whether decoding converts embedded colour spaces to sRGB (`ImageDecodingOptions.colorManagement`).
public enum ImageColorManagement: Sendable, Equatable {
    /// Convert pixels to sRGB with lcms2 (embedded ICC profiles, PNG sRGB/gAMA/cHRM, CMYK JPEG
    /// profiles, HEIF/AVIF `nclx` primaries): what browsers show. HDR (PQ, HLG) is left as decoded, with a reason.
    /// Without lcms2 the pixels stay as decoded and `colorState` says why.
    case convertToSRGB
    /// Keep the decoded pixels and hand back the profile in `DecodedImage.iccProfile`
    /// (CMYK is still turned into RGB, without the profile).
    case keepOriginal
}

/// What a coder found about an image's colour space, other than embedded ICC profile bytes (those are
/// `DecodedImage.iccProfile`).
enum ColorSource: Sendable, Equatable {
    /// RGB primaries and white point as CIE xy (white, red, green, blue) and a decoding gamma (0: the sRGB curve).
    case chromaticities(xy: [Double], gamma: Double, description: String)
    /// The coder already decided (a CMYK JPEG converted without its profile, HDR content left as decoded): nothing
    /// left to convert.
    case settled
}

import CImageCodecs
import Foundation

/// Colour management of decoded images: embedded colour spaces converted to sRGB through lcms2
/// (`liblcms2.so.2`, loaded with dlopen; present on a fresh Debian machine).
///
/// `ImageCodersManager` calls this on every decode after scaling (so a thumbnail converts only its own pixels),
/// unless `ImageDecodingOptions.colorManagement` is `.keepOriginal`. Coders used directly return pixels as
/// decoded, with `iccProfile` and `colorState == .notConverted`; `convertToSRGB(_:)` finishes them, which is
/// also what a custom pipeline (a thumbnailer that decoded with `.keepOriginal`) calls.
///
/// Transforms are built once per distinct profile and cached; an sRGB-equivalent profile, or none, costs no
/// pixel work. Intent: perceptual (Pillow's ImageCms default and browsers'); for matrix/TRC profiles lcms2
/// makes it identical to relative colorimetric. Without lcms2, or with a profile lcms2 cannot use, the pixels
/// stay as decoded and `colorState` says why: never a decoding failure.
public enum ColorManagement {
    /// Why lcms2 cannot be used (not installed, or a symbol missing), or nil when it can.
    public static var unavailableReason: String? { LibLCMS.unavailableReason(soname) }

    /// The loaded lcms2's version, e.g. "lcms2 2.14", or nil when it is unavailable.
    public static var libraryVersion: String? { LibLCMS.versionString(soname) }

    /// Converts `image` (pixels and every frame) to sRGB in place when it carries an ICC profile or other colour
    /// information, and records the outcome in `colorState`. Does nothing to an image already in sRGB or
    /// converted. Partial (progressive) images are converted the same way as complete ones. The pixels are
    /// converted in their own buffer when `image` holds the only reference to it (no copy).
    public static func convertToSRGB(_ image: inout DecodedImage) {
        if case .convertedToSRGB = image.colorState { return }
        if image.colorSource == .settled { return }
        guard let key = conversionKey(image) else {
            image.colorState = .sRGB  // no colour information: sRGB as decoded
            return
        }
        convert(&image, with: transform(for: key))
    }

    /// The transform `image` needs, or nil when there is nothing to convert (converted, settled or untagged).
    static func conversionKey(_ image: DecodedImage) -> TransformKey? {
        if case .convertedToSRGB = image.colorState { return nil }
        if image.colorSource == .settled { return nil }
        if let profile = image.iccProfile { return .icc(profile, cmyk: nil) }
        if case .chromaticities(let xy, let gamma, let description)? = image.colorSource {
            return .chromaticities(xy: xy, gamma: gamma, description: description)
        }
        return nil
    }

    /// Applies a resolved transform to `image` (every pixel) and records the outcome.
    static func convert(_ image: inout DecodedImage, with resolution: Resolution) {
        switch resolution {
        case .identity:
            image.colorState = .sRGB
        case .matrix(let transform):
            image.transformPixels(label: "colour \(transform.description)") { transform.apply(to: &$0) }
            image.colorState = .convertedToSRGB(from: transform.description)
        case .transform(let transform):
            image.transformPixels(label: "colour \(transform.description)") { transform.apply(inPlace: &$0) }
            image.colorState = .convertedToSRGB(from: transform.description)
        case .failure(let reason):
            image.colorState = .notConverted(reason: reason)
            return
        }
        image.iccProfile = nil
        image.colorSource = nil
    }

    /// The manager's step: convert, or for `.keepOriginal` say so on an image that has colour information.
    static func apply(_ mode: ImageColorManagement, to image: inout DecodedImage) {
        switch mode {
        case .convertToSRGB:
            convertToSRGB(&image)
        case .keepOriginal:
            if image.iccProfile != nil || (image.colorSource != nil && image.colorSource != .settled) {
                image.colorState = .notConverted(reason: "kept as decoded (colorManagement: .keepOriginal)")
            }
        }
    }

    /// A transform from a CMYK JPEG's ICC profile (read as libjpeg delivers the samples) to sRGB, or why not.
    static func cmykTransform(profile: Data, inverted: Bool) -> Resolution {
        transform(for: .icc(profile, cmyk: inverted))
    }

    // MARK: - Transform cache

    static let soname = LibLCMS.defaultSoname

    enum TransformKey: Hashable {
        /// `cmyk`: nil for RGB/gray pixels; true/false for CMYK samples (Adobe-inverted or not).
        case icc(Data, cmyk: Bool?)
        case chromaticities(xy: [Double], gamma: Double, description: String)
    }

    enum Resolution {
        case identity
        /// The fast path (no lcms2): a matrix/TRC profile.
        case matrix(MatrixTRCTransform)
        /// lcms2: LUT-based, CMYK, or anything the fast path does not take.
        case transform(ColorTransform)
        case failure(String)
    }

    private static let cache = TransformCache()

    static func transform(for key: TransformKey) -> Resolution {
        cache.resolution(for: key) { resolve(key, soname: soname) }
    }

    /// Builds the transform for `key`, uncached: the matrix/TRC fast path when the profile is one (no lcms2
    /// needed), else lcms2 loaded from `soname` (tests name a missing one).
    static func resolve(_ key: TransformKey, soname: String) -> Resolution {
        if let fast = fastPath(key) { return fast }
        return resolveWithLCMS(key, soname: soname)
    }
}

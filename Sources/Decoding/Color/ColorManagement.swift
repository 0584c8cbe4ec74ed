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
    /// converted. Partial (progressive) images are converted the same way as complete ones.
    public static func convertToSRGB(_ image: inout DecodedImage) {
        if case .convertedToSRGB = image.colorState { return }
        if image.colorSource == .settled { return }
        let key: TransformKey
        if let profile = image.iccProfile {
            key = .icc(profile, cmyk: nil)
        } else if case .chromaticities(let xy, let gamma, let description)? = image.colorSource {
            key = .chromaticities(xy: xy, gamma: gamma, description: description)
        } else {
            image.colorState = .sRGB
            return
        }
        switch transform(for: key) {
        case .identity:
            image.colorState = .sRGB
            image.iccProfile = nil
            image.colorSource = nil
        case .transform(let transform):
            let frames = image.frames.map { ImageFrame(pixels: transform.applied(to: $0.pixels), duration: $0.duration) }
            let step = FramePipeline.Step(label: "colour \(transform.description)", width: image.width,
                                          height: image.height) { transform.applied(to: $0) }
            image = image.replacingPixels(
                width: image.width, height: image.height, pixels: transform.applied(to: image.pixels), frames: frames,
                animation: image.animation(after: step, mappedFrames: frames, loopCount: image.loopCount))
            image.colorState = .convertedToSRGB(from: transform.description)
            image.iccProfile = nil
            image.colorSource = nil
        case .failure(let reason):
            image.colorState = .notConverted(reason: reason)
        }
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
        case transform(ColorTransform)
        case failure(String)
    }

    private static let cache = TransformCache()

    static func transform(for key: TransformKey) -> Resolution {
        cache.resolution(for: key) { resolve(key, soname: soname) }
    }

    /// Builds the transform for `key` with lcms2 loaded from `soname` (tests name a missing one), uncached.
    static func resolve(_ key: TransformKey, soname: String) -> Resolution {
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

/// One lcms2 transform to sRGB RGBA8; deleted when the last user lets go (the cache may drop it while a decode
/// on another thread still applies it).
final class ColorTransform: @unchecked Sendable {  // immutable; lcms2 transforms may be used from several threads
    let lib: LibLCMS
    let handle: UnsafeMutableRawPointer
    let description: String

    init(lib: LibLCMS, handle: UnsafeMutableRawPointer, description: String) {
        self.lib = lib
        self.handle = handle
        self.description = description
    }

    deinit { cic_lcms_delete_transform(lib.api, handle) }

    /// `pixels` (4 bytes each) converted; the alpha bytes of RGBA input are kept.
    func applied(to pixels: [UInt8]) -> [UInt8] {
        var out = pixels
        apply(inPlace: &out)
        return out
    }

    func apply(inPlace pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            cic_lcms_apply(lib.api, handle, base, buffer.count / 4)
        }
    }

    /// For C callers (the JPEG shim converts CMYK rows as libjpeg writes them).
    var api: OpaquePointer { lib.api }
}

/// Resolved transforms by key, at most 32 (then it starts over): a process sees few distinct profiles.
final class TransformCache: @unchecked Sendable {  // `entries` is guarded by `lock`
    private var entries: [Key: ColorManagement.Resolution] = [:]
    private let lock = NSLock()

    /// A key is the SHA-256 of what it describes, not the thing itself: the cache keeps no profile alive (up to
    /// 32, some hundreds of KB each), and holds no enum payloads, whose tagged pointers LeakSanitizer cannot see
    /// inside a long-lived table (it would report them as leaks and hide real ones).
    struct Key: Hashable {
        let sha256: [UInt8]

        init(_ key: ColorManagement.TransformKey) {
            var bytes: [UInt8]
            switch key {
            case .icc(let profile, let cmyk):
                bytes = [0x49, cmyk.map { $0 ? 1 : 0 } ?? 2]
                bytes.append(contentsOf: profile)
            case .chromaticities(let xy, let gamma, let description):
                bytes = [0x43]
                for value in xy + [gamma] { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
                bytes.append(contentsOf: description.utf8)
            }
            sha256 = SHA256.digest(bytes)
        }
    }

    func resolution(for key: ColorManagement.TransformKey, make: () -> ColorManagement.Resolution) -> ColorManagement.Resolution {
        let cacheKey = Key(key)
        if let cached = lock.withLock({ entries[cacheKey] }) { return cached }
        let made = make()  // outside the lock: building a transform can take milliseconds
        lock.withLock {
            if entries.count >= 32 { entries.removeAll() }
            entries[cacheKey] = made
        }
        return made
    }
}

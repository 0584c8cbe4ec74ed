import Foundation

/// JPEG XL through the system's libjxl (`libjxl.so.0.7` on Debian 12, or 0.8 to 0.11), loaded with `dlopen` on
/// first use.
///
/// Decodes bare codestreams and the container (`jxlc`, or a codestream split over `jxlp` boxes; JPEG
/// reconstruction data is ignored and the pixels decoded). Still images and animations (frames composited by
/// libjxl and decoded on demand, `DecodedImage.animation`); alpha made straight; the codestream's orientation
/// applied by libjxl, as the format requires, so `orientation` is `.up`; 16-bit and float samples reduced to
/// 8 bits by libjxl with rounding. Colour: XYB (lossy) images are rendered by libjxl in sRGB; other colour
/// spaces come with their ICC profile (or the primaries of linear samples) for `ImageCodersManager` to convert.
/// Incremental: the groups and passes that have arrived show as partial images while the file downloads.
///
/// Without libjxl the coder still claims JPEG XL data, so the failure is explicit: `decode` throws
/// `.unsupportedFormat` and `unavailableReason` says why (not installed, or a libjxl version the package was
/// not checked against).
public struct JXLCoder: ProgressiveImageCoder {
    let soname: String

    /// The coder for the system libjxl.
    public init() {
        self.init(soname: LibJXL.defaultSoname)
    }

    /// A coder loading libjxl from `soname` (tests name a missing one to check the fallback).
    init(soname: String) {
        self.soname = soname
    }

    /// Why libjxl cannot be used (not installed, a symbol missing, an unverified version), or nil when it can.
    public var unavailableReason: String? {
        LibJXL.unavailableReason(soname)
    }

    /// The loaded library's version, e.g. "libjxl 0.7.0", or nil when it is unavailable.
    public var libraryVersion: String? {
        LibJXL.versionString(soname)
    }

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .jxl
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let lib = try LibJXL.loadForDecoding(soname)
        return try JXLImageDecoding(lib: lib, options: options).decode(data)
    }

    public func canIncrementallyDecode(_ data: Data) -> Bool {
        canDecode(data) && unavailableReason == nil
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder {
        JXLIncrementalDecoder(soname: soname, options: options)
    }
}

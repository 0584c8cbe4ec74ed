import Foundation

/// WebP through the system's libwebp (`libwebp.so.7`), loaded with `dlopen` on first use.
///
/// Still images (lossy, lossless, alpha) are decoded by libwebp; animations are parsed in Swift (RIFF,
/// ANIM, ANMF) and each frame is decoded by libwebp and composited like libwebp's WebPAnimDecoder, the first
/// at decode time and the others on demand (`DecodedImage.animation`).
/// EXIF orientation is reported. Still images decode incrementally, with rows appearing as they arrive.
///
/// Without libwebp the coder still claims WebP data, so the failure is explicit: `decode` throws
/// `.unsupportedFormat` and `unavailableReason` says why.
public struct WebPCoder: ProgressiveImageCoder {
    let soname: String

    /// The coder for the system libwebp.
    public init() {
        self.init(soname: LibWebP.defaultSoname)
    }

    /// A coder loading libwebp from `soname` (tests name a missing one to check the fallback).
    init(soname: String) {
        self.soname = soname
    }

    /// Why libwebp cannot be used (not installed, or a symbol missing), or nil when it can.
    public var unavailableReason: String? {
        LibWebP.unavailableReason(soname)
    }

    /// The loaded library's version, e.g. "libwebp 1.2.4", or nil when it is unavailable.
    public var libraryVersion: String? {
        LibWebP.versionString(soname)
    }

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .webp
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let lib = try LibWebP.loadForDecoding(soname)
        return try WebPImageDecoding(lib: lib, options: options).decode(data)
    }

    public func canIncrementallyDecode(_ data: Data) -> Bool {
        canDecode(data) && unavailableReason == nil
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder {
        WebPIncrementalDecoder(soname: soname, options: options)
    }
}

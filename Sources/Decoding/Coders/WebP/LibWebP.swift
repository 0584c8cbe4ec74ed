import Foundation

/// The few libwebp entry points the WebP coder uses, resolved with `dlsym` from `libwebp.so.7`.
///
/// Only the "simple" and incremental APIs: they take plain integers and pointers, so the Swift function
/// types cannot drift from the C declarations. The "advanced" API (WebPDecoderConfig) is avoided on
/// purpose: its struct layouts would have to be mirrored by hand.
struct LibWebP: DynamicCodecLibrary {
    /// The soname the built-in WebP coder loads.
    static let defaultSoname = "libwebp.so.7"

    /// WEBP_CSP_MODE value of MODE_RGBA (straight alpha, R first) in decode.h.
    static let modeRGBA: Int32 = 1

    /// VP8StatusCode values from decode.h.
    enum Status: Int32 {
        case ok = 0, outOfMemory, invalidParam, bitstreamError, unsupportedFeature, suspended, userAbort, notEnoughData
    }

    typealias GetInfo = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Int32
    typealias DecodeRGBAInto = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, Int, Int32) -> UnsafeMutablePointer<UInt8>?
    typealias INewRGB = @convention(c) (Int32, UnsafeMutablePointer<UInt8>?, Int, Int32) -> OpaquePointer?
    typealias IAppend = @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int) -> Int32
    typealias IDecGetRGB = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?,
                                           UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> UnsafeMutablePointer<UInt8>?
    typealias IDelete = @convention(c) (OpaquePointer?) -> Void
    typealias GetDecoderVersion = @convention(c) () -> Int32

    let getInfo: GetInfo
    /// WebPDecodeRGBAInto: decodes into caller memory (rows `stride` bytes apart), so pixels land in the
    /// image's own array or straight in an animation canvas, and nothing needs WebPFree.
    let decodeRGBAInto: DecodeRGBAInto
    let iNewRGB: INewRGB
    let iAppend: IAppend
    let iDecGetRGB: IDecGetRGB
    let iDelete: IDelete
    let decoderVersion: Int32

    /// Resolves every entry point, or says why the library cannot be used.
    static func load(_ soname: String) -> Result<LibWebP, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: LibWebP.self) { library in Result { () throws(LibraryUnavailable) in try resolve(library) } }
    }

    private static func resolve(_ library: DynamicLibrary) throws(LibraryUnavailable) -> LibWebP {
        LibWebP(
            getInfo: try library.function("WebPGetInfo", as: GetInfo.self),
            decodeRGBAInto: try library.function("WebPDecodeRGBAInto", as: DecodeRGBAInto.self),
            iNewRGB: try library.function("WebPINewRGB", as: INewRGB.self),
            iAppend: try library.function("WebPIAppend", as: IAppend.self),
            iDecGetRGB: try library.function("WebPIDecGetRGB", as: IDecGetRGB.self),
            iDelete: try library.function("WebPIDelete", as: IDelete.self),
            decoderVersion: try library.function("WebPGetDecoderVersion", as: GetDecoderVersion.self)())
    }

    /// "libwebp 1.2.4", from WebPGetDecoderVersion (0xMMmmpp).
    var versionString: String {
        "libwebp \(decoderVersion >> 16).\((decoderVersion >> 8) & 0xFF).\(decoderVersion & 0xFF)"
    }
}

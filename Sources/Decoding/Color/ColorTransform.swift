import CImageCodecs
import Foundation

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

    /// Converts `pixels` (4 bytes each) in place; the alpha bytes of RGBA input are kept.
    func apply(inPlace pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            apply(to: base, count: buffer.count / 4)
        }
    }

    func apply(to pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        cic_lcms_apply(lib.api, handle, pixels, count)
    }

    /// For C callers (the JPEG shim converts CMYK rows as libjpeg writes them).
    var api: OpaquePointer { lib.api }
}

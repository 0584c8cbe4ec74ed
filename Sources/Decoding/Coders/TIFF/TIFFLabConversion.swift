import CImageCodecs
import Foundation

/// CIELab → sRGB for TIFF's CIELab and ICCLab images (photometric 8 and 9), through lcms2 (`liblcms2.so.2`,
/// dlopen) exactly as Pillow's ImageCms converts a "LAB" image: a D50 Lab profile to sRGB, perceptual intent.
/// Separate from the ICC-profile path in `ColorManagement`: it needs no embedded profile, and Lab pixels are not
/// displayable, so they are converted whatever `ImageDecodingOptions.colorManagement` says.
final class TIFFLabConversion: DynamicCodecLibrary, @unchecked Sendable {  // immutable after init
    /// The soname the TIFF coder loads for Lab images (the same library as colour management).
    static let defaultSoname = "liblcms2.so.2"
    /// What `DecodedImage.colorState` names as the source colour space.
    static let sourceDescription = "CIELab (D50)"

    private let api: OpaquePointer
    /// Built once per process and never deleted, like the library handle it points into.
    private let transform: UnsafeMutableRawPointer
    let versionString = "lcms2"

    private init(api: OpaquePointer, transform: UnsafeMutableRawPointer) {
        self.api = api
        self.transform = transform
    }

    static func load(_ soname: String) -> Result<TIFFLabConversion, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: TIFFLabConversion.self) { library in
            library.shimAPI(cic_lab_load).flatMap { api in
                guard let transform = cic_lab_create_transform(api) else {
                    return .failure(LibraryUnavailable(soname: soname, reason: "lcms2 refused a Lab -> sRGB transform"))
                }
                return .success(TIFFLabConversion(api: api, transform: transform))
            }
        }
    }

    /// Converts L, a, b, alpha bytes (lcms2's 8-bit Lab encoding) to sRGB RGBA in place; alpha is kept.
    func convert(_ pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            cic_lab_apply(api, transform, buffer.baseAddress, buffer.count / 4)
        }
    }
}

import CImageCodecs
import Foundation

/// libtiff (`libtiff.so.6`) opened with dlopen and its entry points resolved by the C shim (cic_tiff.c),
/// once per soname.
final class LibTIFF: DynamicCodecLibrary, @unchecked Sendable {  // immutable after init
    /// The soname the built-in TIFF coder loads.
    static let defaultSoname = "libtiff.so.6"

    let api: OpaquePointer
    /// libtiff's banner, e.g. "LIBTIFF, Version 4.5.0".
    let versionString: String

    private init(api: OpaquePointer) {
        self.api = api
        // The banner continues with copyright lines: keep the first.
        versionString = String(cString: cic_tiff_version(api)).split(separator: "\n").first.map(String.init) ?? "libtiff"
    }

    static func load(_ soname: String) -> Result<LibTIFF, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: LibTIFF.self) { library in library.shimAPI(cic_tiff_load).map(LibTIFF.init) }
    }
}

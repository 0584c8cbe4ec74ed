import CImageCodecs
import Foundation

/// libheif (`libheif.so.1`) opened with dlopen and its entry points resolved by the C shim (cic_heif.c),
/// once per soname.
final class LibHeif: DynamicCodecLibrary, @unchecked Sendable {  // immutable after init
    /// The soname the built-in HEIF coder loads.
    static let defaultSoname = "libheif.so.1"

    let api: OpaquePointer
    /// e.g. "libheif 1.15.1".
    let versionString: String

    private init(api: OpaquePointer) {
        self.api = api
        versionString = "libheif " + String(cString: cic_heif_version(api))
    }

    static func load(_ soname: String) -> Result<LibHeif, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: LibHeif.self) { library in library.shimAPI(cic_heif_load).map(LibHeif.init) }
    }
}

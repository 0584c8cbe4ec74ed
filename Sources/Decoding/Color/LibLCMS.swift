import CImageCodecs
import Foundation

/// Little CMS 2 (`liblcms2.so.2`) opened with dlopen and its entry points resolved by the C shim (cic_lcms.c),
/// once per soname.
final class LibLCMS: DynamicCodecLibrary, @unchecked Sendable {  // immutable after init
    /// The soname colour management loads (Debian's liblcms2-2, present on a fresh machine).
    static let defaultSoname = "liblcms2.so.2"

    let api: OpaquePointer
    /// e.g. "lcms2 2.14".
    let versionString: String

    private init(api: OpaquePointer) {
        self.api = api
        let v = Int(cic_lcms_version(api))
        versionString = "lcms2 \(v / 1000).\(v % 1000 / 10)"
    }

    static func load(_ soname: String) -> Result<LibLCMS, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: LibLCMS.self) { library in library.shimAPI(cic_lcms_load).map(LibLCMS.init) }
    }
}

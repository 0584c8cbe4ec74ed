import CImageCodecs
import Foundation

/// libjxl opened with dlopen (with its libjxl_threads for the parallel runner, when present) and its entry points
/// resolved by the C shim (cic_jxl.c), once per soname. The shim accepts exactly the versions whose headers it was
/// checked against (0.7 to 0.11) and refuses any other, naming it.
final class LibJXL: DynamicCodecLibrary, @unchecked Sendable {  // immutable after init
    /// The sonames tried, newest first: Debian 12 ships 0.7; 0.8 to 0.11 are the later releases.
    static let sonames = ["libjxl.so.0.11", "libjxl.so.0.10", "libjxl.so.0.9", "libjxl.so.0.8", "libjxl.so.0.7"]

    /// The soname the built-in JPEG XL coder loads: the newest one installed (Debian 12's when none is, for
    /// the "not installed" message).
    static let defaultSoname: String = sonames.first { DynamicLibrary.open($0).isSuccess } ?? "libjxl.so.0.7"

    let api: OpaquePointer
    /// e.g. "libjxl 0.7.0".
    let versionString: String
    /// Whether decoders can use libjxl_threads' parallel runner.
    let hasThreads: Bool

    private init(api: OpaquePointer) {
        self.api = api
        let v = cic_jxl_version(api)
        versionString = "libjxl \(v / 1_000_000).\(v / 1000 % 1000).\(v % 1000)"
        hasThreads = cic_jxl_has_threads(api) != 0
    }

    static func load(_ soname: String) -> Result<LibJXL, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: LibJXL.self) { library in
            // "libjxl.so.0.7" → "libjxl_threads.so.0.7": the runner must come from the same release.
            let threads = try? DynamicLibrary.open(soname.replacingOccurrences(of: "libjxl.so", with: "libjxl_threads.so")).get()
            var missing = [CChar](repeating: 0, count: 160)
            guard let api = cic_jxl_load(library.handle, threads?.handle, &missing, missing.count) else {
                return .failure(LibraryUnavailable(soname: soname, reason: stringFromCBuffer(missing)))
            }
            return .success(LibJXL(api: api))
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

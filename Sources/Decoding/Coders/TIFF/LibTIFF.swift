import CImageCodecs
import Foundation

/// libtiff (`libtiff.so.6`) opened with dlopen and its entry points resolved by the C shim (cic_tiff.c),
/// once per soname.
final class LibTIFF: @unchecked Sendable {  // immutable after init; `cache` is guarded by `cacheLock`
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
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let cached = cache[soname] { return cached }
        let result = DynamicLibrary.open(soname).flatMap { library -> Result<LibTIFF, LibraryUnavailable> in
            var missing = [CChar](repeating: 0, count: 128)
            guard let api = cic_tiff_load(library.handle, &missing, missing.count) else {
                return .failure(LibraryUnavailable(soname: soname, reason: stringFromCBuffer(missing)))
            }
            return .success(LibTIFF(api: api))
        }
        cache[soname] = result
        return result
    }

    nonisolated(unsafe) private static var cache: [String: Result<LibTIFF, LibraryUnavailable>] = [:]  // guarded by cacheLock
    private static let cacheLock = NSLock()
}

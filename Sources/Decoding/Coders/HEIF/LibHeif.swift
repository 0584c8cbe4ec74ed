import CImageCodecs
import Foundation

/// libheif (`libheif.so.1`) opened with dlopen and its entry points resolved by the C shim (cic_heif.c),
/// once per soname.
final class LibHeif: @unchecked Sendable {  // immutable after init; `cache` is guarded by `cacheLock`
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
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let cached = cache[soname] { return cached }
        let result = DynamicLibrary.open(soname).flatMap { library -> Result<LibHeif, LibraryUnavailable> in
            var missing = [CChar](repeating: 0, count: 128)
            guard let api = cic_heif_load(library.handle, &missing, missing.count) else {
                return .failure(LibraryUnavailable(soname: soname, reason: stringFromCBuffer(missing)))
            }
            return .success(LibHeif(api: api))
        }
        cache[soname] = result
        return result
    }

    nonisolated(unsafe) private static var cache: [String: Result<LibHeif, LibraryUnavailable>] = [:]  // guarded by cacheLock
    private static let cacheLock = NSLock()
}

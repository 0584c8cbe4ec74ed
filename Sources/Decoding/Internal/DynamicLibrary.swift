import Foundation

/// A shared library opened with `dlopen` at run time, so optional codecs (libwebp, libheif, libtiff) are
/// used when installed and the package still builds and runs without them.
///
/// Handles are opened once per soname and never closed: coders keep function pointers into them for the
/// life of the process, and `dlclose` would make those dangle.
final class DynamicLibrary: @unchecked Sendable {  // immutable after init; `cache` is guarded by `cacheLock`
    let soname: String
    let handle: UnsafeMutableRawPointer

    private init(soname: String, handle: UnsafeMutableRawPointer) {
        self.soname = soname
        self.handle = handle
    }

    /// The opened library, or the loader's reason (dlerror) why it could not be opened.
    static func open(_ soname: String) -> Result<DynamicLibrary, LibraryUnavailable> {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let cached = cache[soname] { return cached }
        let result: Result<DynamicLibrary, LibraryUnavailable>
        if let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) {
            result = .success(DynamicLibrary(soname: soname, handle: handle))
        } else {
            let reason = dlerror().map { String(cString: $0) } ?? "dlopen failed"
            result = .failure(LibraryUnavailable(soname: soname, reason: reason))
        }
        cache[soname] = result
        return result
    }

    /// `name` as a C function of type `T` (a `@convention(c)` function type).
    func function<T>(_ name: String, as type: T.Type) throws(LibraryUnavailable) -> T {
        guard let pointer = dlsym(handle, name) else {
            throw LibraryUnavailable(soname: soname, reason: "symbol \(name) not found")
        }
        return unsafeBitCast(pointer, to: type)
    }

    // dlopen results are cached so a missing library costs one failed lookup, not one per decode.
    nonisolated(unsafe) private static var cache: [String: Result<DynamicLibrary, LibraryUnavailable>] = [:]
    private static let cacheLock = NSLock()
}

/// Why an optional codec library cannot be used: it is not installed, or lacks a needed symbol.
struct LibraryUnavailable: Error, Sendable, CustomStringConvertible {
    let soname: String
    let reason: String
    var description: String { "\(soname) unavailable: \(reason)" }
}

/// The text of a NUL-terminated C buffer that a C function filled in (an error message).
func stringFromCBuffer(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

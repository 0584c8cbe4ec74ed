import CDynamicLoading
import Foundation

/// A shared library opened with `dlopen` at run time, so optional libraries (the codecs, lcms2, libcurl) are
/// used when installed and the package still builds and runs without them: the one place Swift code opens a
/// library or resolves a symbol, and, through `load(_:as:resolve:)`, the one cache of loaded libraries.
///
/// The C shims fill their entry-point tables from `handle` with the symbol-table idiom of cdl.h (`shimAPI`);
/// libwebp's few plain-C entry points are resolved here (`function`), through the same idiom. Handles are never closed: loaded libraries
/// keep function pointers into them for the life of the process, and `dlclose` would make those dangle.
package struct DynamicLibrary: @unchecked Sendable {  // immutable; the handle is never closed
    package let soname: String
    package let handle: UnsafeMutableRawPointer

    /// Opens `soname` now, or gives the loader's reason (dlerror) why it could not. Not cached: a library is used
    /// through `load`, which caches what was resolved from it, failures included.
    package static func open(_ soname: String) -> Result<DynamicLibrary, LibraryUnavailable> {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "dlopen failed"
            return .failure(LibraryUnavailable(soname: soname, reason: reason))
        }
        return .success(DynamicLibrary(soname: soname, handle: handle))
    }

    /// The `Library` at `soname`: opened and `resolve`d on first use, then the same result (a failure too, so a
    /// missing library costs one failed lookup, not one per decode). `resolve` runs under the cache's lock, so
    /// concurrent first uses resolve once; it must not load another library through this cache.
    package static func load<Library: Sendable>(
        _ soname: String, as type: Library.Type, resolve: (DynamicLibrary) -> Result<Library, LibraryUnavailable>
    ) -> Result<Library, LibraryUnavailable> {
        let key = CacheKey(library: ObjectIdentifier(type), soname: soname)
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let cached = cache[key] as? Result<Library, LibraryUnavailable> { return cached }
        let result = open(soname).flatMap(resolve)
        cache[key] = result
        return result
    }

    /// `name` as a C function of type `T` (a `@convention(c)` function type), resolved as the C shims resolve
    /// theirs: through a one-entry symbol table (cdl.h), so `cdl_resolve` is the only place that calls `dlsym`.
    func function<T>(_ name: String, as type: T.Type) throws(LibraryUnavailable) -> T {
        var pointer: UnsafeMutableRawPointer?
        var reason = [CChar](repeating: 0, count: 256)
        let status = name.withCString { cName in
            var entry = cdl_symbol(name: cName, offset: 0, optional: 0)
            return withUnsafeMutableBytes(of: &pointer) { slot in
                cdl_resolve(handle, &entry, 1, slot.baseAddress, &reason, reason.count)
            }
        }
        guard status == 0, let pointer else {
            throw LibraryUnavailable(soname: soname, reason: stringFromCBuffer(reason))
        }
        return unsafeBitCast(pointer, to: type)
    }

    /// The entry-point table a C shim's loader (`cic_heif_load`, `cic_tiff_load`, …) resolves from this library,
    /// or the shim's message naming what is missing.
    func shimAPI(
        _ load: (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> OpaquePointer?
    ) -> Result<OpaquePointer, LibraryUnavailable> {
        var missing = [CChar](repeating: 0, count: 256)
        guard let api = load(handle, &missing, missing.count) else {
            return .failure(LibraryUnavailable(soname: soname, reason: stringFromCBuffer(missing)))
        }
        return .success(api)
    }

    private struct CacheKey: Hashable {
        let library: ObjectIdentifier
        let soname: String
    }

    // Each value is the `Result<Library, LibraryUnavailable>` of its key's library type.
    nonisolated(unsafe) private static var cache: [CacheKey: any Sendable] = [:]
    private static let cacheLock = NSLock()
}

/// An optional codec library (libheif, libtiff, libwebp) that a built-in coder loads by soname on first use.
///
/// The coders' shared behaviour lives here: a missing library is reported by `unavailableReason`, and a
/// decode without it throws `.unsupportedFormat`, so the coder can still claim its format and fail explicitly.
protocol DynamicCodecLibrary: Sendable {
    /// The library at `soname` with every entry point resolved, or why it cannot be used. Cached per soname
    /// (`DynamicLibrary.load`).
    static func load(_ soname: String) -> Result<Self, LibraryUnavailable>
    /// The library's own version text, e.g. "libwebp 1.2.4".
    var versionString: String { get }
}

extension DynamicCodecLibrary {
    /// Why the library at `soname` cannot be used (not installed, or a symbol missing), or nil when it can.
    static func unavailableReason(_ soname: String) -> String? {
        if case .failure(let error) = load(soname) { return error.description }
        return nil
    }

    /// The version of the library at `soname`, or nil when it is unavailable.
    static func versionString(_ soname: String) -> String? {
        try? load(soname).get().versionString
    }

    /// The library a decode needs; without it the data cannot be decoded at all: `.unsupportedFormat`.
    static func loadForDecoding(_ soname: String) throws(ImageDecodingError) -> Self {
        guard let library = try? load(soname).get() else { throw ImageDecodingError.unsupportedFormat }
        return library
    }
}

/// Why an optional library cannot be used: it is not installed, or lacks a needed symbol or version.
package struct LibraryUnavailable: Error, Sendable, CustomStringConvertible {
    package let soname: String
    package let reason: String
    package var description: String { "\(soname) unavailable: \(reason)" }

    package init(soname: String, reason: String) {
        self.soname = soname
        self.reason = reason
    }
}

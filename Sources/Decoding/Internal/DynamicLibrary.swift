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

/// An optional codec library (libheif, libtiff, libwebp) that a built-in coder loads by soname on first use.
///
/// The coders' shared behaviour lives here: a missing library is reported by `unavailableReason`, and a
/// decode without it throws `.unsupportedFormat`, so the coder can still claim its format and fail explicitly.
protocol DynamicCodecLibrary: Sendable {
    /// The library at `soname` with every entry point resolved, or why it cannot be used. Cached per soname.
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

/// The loaded codec libraries of one type, by soname: each is opened and resolved once, and a missing one
/// costs one failed lookup, not one per decode.
final class CodecLibraryCache<Library: Sendable>: @unchecked Sendable {  // `entries` is guarded by `lock`
    private var entries: [String: Result<Library, LibraryUnavailable>] = [:]
    private let lock = NSLock()

    /// The cached result for `soname`, or the library opened and `resolve`d now (under the lock, so
    /// concurrent first decodes resolve it once).
    func load(_ soname: String, resolve: (DynamicLibrary) -> Result<Library, LibraryUnavailable>) -> Result<Library, LibraryUnavailable> {
        lock.lock()
        defer { lock.unlock() }
        if let cached = entries[soname] { return cached }
        let result = DynamicLibrary.open(soname).flatMap(resolve)
        entries[soname] = result
        return result
    }
}

/// Why an optional codec library cannot be used: it is not installed, or lacks a needed symbol.
struct LibraryUnavailable: Error, Sendable, CustomStringConvertible {
    let soname: String
    let reason: String
    var description: String { "\(soname) unavailable: \(reason)" }
}

extension DynamicLibrary {
    /// The entry-point table a C shim loader (`cic_heif_load`, `cic_tiff_load`) resolves from this library,
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
}

import CHiredis
import Foundation

/// hiredis, the C client the Redis project maintains, loaded once per process with `dlopen` (nothing is
/// linked at build time). The newest ABI found wins: `libhiredis.so.1.1.0` (hiredis 1.1 and later),
/// `libhiredis.so.1.0.0`, then Debian 12's `libhiredis.so.0.14`; `OD_HIREDIS` names another file to try
/// first. The C shim (Sources/CHiredis) reads either ABI's reply and context layouts.
enum HiredisLibrary {
    static let sonames = ["libhiredis.so.1.1.0", "libhiredis.so.1.0.0", "libhiredis.so.0.14"]
    static let installHint = "install hiredis: apt-get install libhiredis0.14 (Debian 12) or libhiredis1.1.0"

    /// The loaded library's ABI (0 or 1), or why none could be loaded.
    static let loaded: Result<Int, RedisCacheError> = load()

    /// Why the Redis tier cannot run here, or nil when hiredis is loaded.
    static var unavailableReason: String? {
        if case .failure(let error) = loaded { return error.description }
        return nil
    }

    private static func load() -> Result<Int, RedisCacheError> {
        var candidates = sonames
        if let custom = ProcessInfo.processInfo.environment["OD_HIREDIS"], !custom.isEmpty { candidates.insert(custom, at: 0) }
        var reasons: [String] = []
        for soname in candidates {
            var reason = [CChar](repeating: 0, count: 512)
            if chiredis_load(soname, &reason, reason.count) == 0 {
                return .success(Int(chiredis_abi()))
            }
            reasons.append(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return .failure(.clientLibraryMissing(reasons.joined(separator: "; ")))
    }
}

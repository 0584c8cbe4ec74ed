import CImageCodecs
import Foundation

/// libavif opened with dlopen and its entry points resolved by the C shim (cic_avif.c), once per soname. The shim
/// accepts only the versions whose structure layouts it mirrors (0.11.x, soname 15; 1.0–1.4, soname 16): any other
/// version makes the library unavailable with a reason naming it.
final class LibAVIF: DynamicCodecLibrary, @unchecked Sendable {  // immutable after init
    /// The sonames the built-in AVIF coder tries, newest first: libavif 1.x (Debian 13, Ubuntu 24.04) and 0.11
    /// (Debian 12).
    static let defaultSonames = ["libavif.so.16", "libavif.so.15"]

    let api: OpaquePointer
    /// e.g. "libavif 0.11.1 (dav1d [dec]:1.0.0, aom [enc/dec]:v3.6.0, …)".
    let versionString: String
    /// The AV1 encoder libavif would use ("aom", "rav1e", "svt"), or nil for a decoder-only build.
    let encoderName: String?

    private init(api: OpaquePointer) {
        self.api = api
        var codecs = [CChar](repeating: 0, count: 256)
        cic_avif_codec_versions(api, &codecs, codecs.count)
        versionString = "libavif \(String(cString: cic_avif_version(api))) (\(stringFromCBuffer(codecs)))"
        encoderName = cic_avif_encoder_name(api).map { String(cString: $0) }
    }

    static func load(_ soname: String) -> Result<LibAVIF, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: LibAVIF.self) { library in library.shimAPI(cic_avif_load).map(LibAVIF.init) }
    }

    /// The first of `sonames` that loads, or why none does (every soname's reason).
    static func load(firstOf sonames: [String]) -> Result<LibAVIF, LibraryUnavailable> {
        var reasons: [String] = []
        for soname in sonames {
            switch load(soname) {
            case .success(let library): return .success(library)
            case .failure(let why): reasons.append("\(soname): \(why.reason)")
            }
        }
        return .failure(LibraryUnavailable(soname: sonames.joined(separator: " or "), reason: reasons.joined(separator: "; ")))
    }
}

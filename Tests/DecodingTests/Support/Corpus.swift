import Foundation
import Testing
import TestRequirements

// Every suite in DecodingTests is `.serialized`: their CPU-heavy synchronous cases run on Swift concurrency's
// cooperative pool (one thread per core). Enqueued all at once they starved the downloader tests' awaits in the
// same process for 30 s and more; one case at a time per suite leaves room for them.

/// The shared decoder conformance corpus (`../shared/corpus` beside the package, or
/// `$OPERATIONDOWNLOADER_CORPUS`) and its `expected.json`.
enum Corpus {
    /// The corpus folder, or nil when it is not on this machine (tests that read it say `.requires(.corpus)`).
    static var root: URL? { SharedCorpus.root }

    /// Bytes of a corpus file by its path relative to the corpus folder ("pngsuite/basn0g01.png").
    static func data(_ relativePath: String) throws -> Data {
        guard let root else { throw CorpusMissing() }
        let url = root.appendingPathComponent(relativePath)
        // generated/empty.bin: this toolchain's Data(contentsOf:) loses a 4 KB buffer for an empty file, which
        // the address sanitizer's leak check (CI) would report against every test that reads it.
        if (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue == 0 { return Data() }
        return try Data(contentsOf: url)
    }

    /// Every entry of expected.json, keyed by relative path.
    static let expected: [String: Entry] = {
        guard let root, let data = try? Data(contentsOf: root.appendingPathComponent("expected.json")),
              let file = try? JSONDecoder().decode(ExpectedFile.self, from: data) else { return [:] }
        return file.files
    }()

    /// Every corpus file's relative path, sorted.
    static var allFiles: [String] { expected.keys.sorted() }

    /// Relative paths of every corpus file of `format` (as expected.json names it: "jpeg", "png", ...).
    static func files(format: String) -> [String] {
        expected.filter { $0.value.format == format }.keys.sorted()
    }

    struct CorpusMissing: Error, CustomStringConvertible {
        var description: String { Requirement.corpus.missingReason ?? "the decoder corpus is missing" }
    }

    struct ExpectedFile: Decodable { let files: [String: Entry] }

    struct FrameHash: Decodable {
        let sha256: String
        let w: Int
        let h: Int
        let duration_ms: Double?
    }

    /// One file's documented outcome. Field names follow expected.json.
    struct Entry: Decodable {
        let format: String
        let expected: String
        let compare: String
        let width: Int?
        let height: Int?
        let frames: Int?
        let loop: Int?
        let sha256_rgba: String?
        let probe_sha256_rgba: String?
        let probe_status: String?
        let probe_exif_orientation: Int?
        let thumb16_rgba_b64: String?
        let mean_rgba: [Double]?
        let frames_rgba: [FrameHash]?
        let pillow: String
        let properties: [String]
        let note: String?
        let pillow_reference_suspect: String?

        /// The exact RGBA hash to match: libjpeg/libpng's where MANIFEST says Pillow is wrong or Pillow failed.
        var referenceSHA256: String? {
            pillow_reference_suspect != nil ? probe_sha256_rgba : (sha256_rgba ?? probe_sha256_rgba)
        }
    }
}

import Foundation

/// Tests/Support/DecoderFixtures: small files for decoder defects found on an outside corpus (issue 12,
/// point 11) and colour-managed images (issue 17), with their references (see the README there).
enum DecoderFixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/DecoderFixtures")

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    struct Entry: Decodable {
        let what: String
        let width: Int
        let height: Int
        let reference: String
        let sha256_rgba: String
    }

    private struct File: Decodable { let files: [String: Entry] }

    /// expected.json: reference RGBA8 SHA-256 per file (Pillow's decode, or the generator's own samples).
    static let expected: [String: Entry] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("expected.json")),
              let file = try? JSONDecoder().decode(File.self, from: data) else { return [:] }
        return file.files
    }()
}

/// Tests/Support/DecoderFixtures/variants: odd-but-valid variants of every still format (issue 20), made by
/// make_variant_fixtures.py, with Pillow's hash and the reference hash (Pillow's unless `why` says otherwise).
enum FormatVariants {
    static let directory = DecoderFixtures.directory.appendingPathComponent("variants")

    struct Entry: Decodable {
        let width: Int
        let height: Int
        let reference: String
        let sha256_rgba: String
        let pillow_sha256_rgba: String?
        /// The colour-managed decode's reference, for files with a profile the decoder converts through.
        let managed_sha256_rgba: String?
        let why: String?
        let lab: Bool?
    }

    private struct File: Decodable { let files: [String: Entry] }

    static let expected: [String: Entry] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("expected.json")),
              let file = try? JSONDecoder().decode(File.self, from: data) else { return [:] }
        return file.files
    }()

    /// Every variant: each one a decoder must reproduce exactly.
    static let decodable: [String] = expected.keys.sorted()

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }
}

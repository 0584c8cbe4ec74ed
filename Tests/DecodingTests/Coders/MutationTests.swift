import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Thousands of truncated and bit-flipped variants of small corpus files: each decodes or fails with a typed
/// error, one-shot and chunked. A trap would kill the test process, so finishing is half the assertion.
@Suite(.serialized, .offThePool) struct MutationTests {
    static let smallFiles: [String] = Corpus.allFiles.filter { ((try? Corpus.data($0).count) ?? .max) <= 48 * 1024 }
    static let options = ImageDecodingOptions(maximumPixelCount: 4_000_000)

    /// A damaged copy of `data`: truncated, bytes flipped, a run overwritten, or a header field smashed.
    static func mutate(_ data: Data, using random: inout SeededRandom) -> Data {
        var bytes = [UInt8](data)
        guard !bytes.isEmpty else { return data }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
        case 1:
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
        case 2:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            for i in start..<min(bytes.count, start + Int.random(in: 1...64, using: &random)) { bytes[i] = UInt8.random(in: 0...255, using: &random) }
        default:
            // Headers hold sizes, counts and lengths: smash one of the first 64 bytes to an extreme.
            bytes[Int.random(in: 0..<min(64, bytes.count), using: &random)] = [0x00, 0xFF, 0x7F, 0x80].randomElement(using: &random) ?? 0
        }
        return Data(bytes)
    }

    @Test(.requires(.corpus))
    func mutatedFilesNeverTrap() throws {
        #expect(Self.smallFiles.count > 100)
        var random = SeededRandom(seed: 0x5EED)
        var decoded = 0, failed = 0
        let perFile = max(1, 4000 / max(Self.smallFiles.count, 1))
        for path in Self.smallFiles {
            let original = try Corpus.data(path)
            for _ in 0..<perFile {
                let variant = Self.mutate(original, using: &random)
                switch expectImageOrTypedError(path, { try ImageCodersManager.shared.decode(variant, options: Self.options) }) {
                case .image: decoded += 1
                case .typedError, .untypedError: failed += 1
                }
            }
        }
        #expect(decoded + failed == perFile * Self.smallFiles.count)
    }

    @Test(.requires(.corpus))
    func mutatedFilesNeverTrapWhenChunked() throws {
        var random = SeededRandom(seed: 0xC0FFEE)
        var tried = 0
        let perFile = max(1, 1500 / max(Self.smallFiles.count, 1))
        for path in Self.smallFiles {
            let original = try Corpus.data(path)
            for _ in 0..<perFile {
                let variant = Self.mutate(original, using: &random)
                let oneShot = Result { try ImageCodersManager.shared.decode(variant, options: Self.options) }
                let chunked = IncrementalConformanceTests.decodeInChunks(variant, seed: random.next(), options: Self.options)
                if case .failure(let error) = chunked {
                    #expect(isTypedDecodingError(error), "\(path): untyped error \(error)")
                }
                // The incremental contract holds for damaged data too: same pixels or both fail.
                if case .success(let a) = oneShot, case .success(let b) = chunked {
                    #expect(a.pixels == b.pixels, "\(path): chunked pixels differ on a mutation")
                }
                tried += 1
            }
        }
        #expect(tried == perFile * Self.smallFiles.count)
    }
}

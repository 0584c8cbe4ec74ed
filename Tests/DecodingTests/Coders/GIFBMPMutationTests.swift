import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Thousands of damaged GIF, BMP and ICO files: every decode must end in an image or an
/// `ImageDecodingError`, never a trap, and the incremental GIF decoder must agree with the one-shot one.
@Suite(.serialized, .offThePool) struct GIFBMPMutationTests {
    /// A low pixel limit keeps mutated headers from asking for big (legal) canvases and slowing the run.
    static let options = ImageDecodingOptions(maximumPixelCount: 1_000_000)

    static func seeds() -> [(String, Data)] {
        var files: [(String, Data)] = []
        for format in ["gif", "bmp", "ico"] {
            for file in Corpus.files(format: format) {
                guard let data = try? Corpus.data(file), data.count <= 40_000 else { continue }
                files.append((file, data))
            }
        }
        // Synthetic seeds cover what the corpus lacks: RLE4 with deltas, an icon with an AND mask.
        let rle: [UInt8] = [2, 0x12, 0, 2, 1, 0, 0, 0, 0, 3, 0x21, 0x10, 0, 1]
        files.append(("rle4", Data(BMPBuilder.file(width: 4, height: 2, bits: 4, rows: [rle], compression: 2,
                                                   palette: [[0, 0, 0], [255, 255, 255], [255, 0, 0]]))))
        let dib = ICOCoderTests.dib(width: 2, height: 1, bits: 24, rows: [[0, 0, 255, 255, 0, 0, 0, 0]], mask: [[0x80, 0, 0, 0]])
        files.append(("ico", ICOCoderTests.ico([.init(width: 2, height: 1, bits: 24, payload: dib)])))
        return files
    }

    static func mutate(_ data: Data, _ random: inout SeededRandom) -> Data {
        var bytes = [UInt8](data)
        guard !bytes.isEmpty else { return data }
        switch random.next() % 5 {
        case 0:  // flip a few bytes anywhere
            for _ in 0..<(1 + Int(random.next() % 4)) {
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            }
        case 1:  // damage the headers, where sizes and offsets live
            let limit = min(bytes.count, 64)
            for _ in 0..<(1 + Int(random.next() % 3)) {
                bytes[Int(random.next() % UInt64(limit))] = [0, 0xFF, 0x80, 0x7F][Int(random.next() % 4)]
            }
        case 2:  // cut short
            bytes.removeLast(Int(random.next() % UInt64(bytes.count)))
        case 3:  // insert junk
            let at = Int(random.next() % UInt64(bytes.count))
            bytes.insert(contentsOf: (0..<(1 + Int(random.next() % 16))).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: at)
        default:  // remove a span
            let at = Int(random.next() % UInt64(bytes.count))
            let n = min(bytes.count - at, 1 + Int(random.next() % 32))
            bytes.removeSubrange(at..<at + n)
        }
        return Data(bytes)
    }

    @Test(.requires(.corpus))
    func mutatedFilesNeverTrap() throws {
        let seeds = Self.seeds()
        #expect(seeds.count > 30)
        let coders: [any ImageCoder] = [GIFCoder(), BMPCoder(), ICOCoder()]
        var random = SeededRandom(seed: 2026)
        var decoded = 0, rejected = 0
        let perSeed = max(1, 3000 / seeds.count)
        for (name, data) in seeds {
            for _ in 0..<perSeed {
                let mutated = Self.mutate(data, &random)
                for coder in coders where coder.canDecode(mutated) {
                    switch expectImageOrTypedError(name, { try coder.decode(mutated, options: Self.options) }) {
                    case .image: decoded += 1
                    case .typedError: rejected += 1
                    case .untypedError: break
                    }
                }
                if GIFCoder().canDecode(mutated) { try Self.checkIncrementalAgrees(mutated, name: name, random: &random) }
            }
        }
        #expect(decoded + rejected >= 2500)
        #expect(decoded > 0 && rejected > 0)
    }

    static func checkIncrementalAgrees(_ data: Data, name: String, random: inout SeededRandom) throws {
        let whole = Result { try GIFCoder().decode(data, options: options) }
        let decoder = GIFCoder().makeIncrementalDecoder(options: options)
        var offset = 0
        var failure: (any Error)?
        while offset < data.count || offset == 0 {
            let end = min(data.count, offset + random.chunkSize())
            do {
                try decoder.append(data.subdata(in: offset..<end), isFinal: end == data.count)
            } catch {
                failure = error
                break
            }
            offset = end
            if end == data.count { break }
        }
        switch whole {
        case .success(let image):
            #expect(failure == nil, "\(name): incremental threw \(String(describing: failure))")
            #expect(decoder.currentImage() == image, "\(name): incremental result differs")
        case .failure(let error):
            #expect(failure.map { String(describing: $0) } == String(describing: error), "\(name): throws differ")
        }
    }
}

import Foundation
import Testing
import Decoding

/// Replays every input the fuzzers ever flagged (Tests/Support/FuzzRegressions/<target>/, written by
/// Fuzz/run.sh) through the same calls as Fuzz/Sources/DecodeFuzzer.swift: one-shot decode, then the chunked
/// incremental decode. A fixed finding must now end with a value or a thrown error, never a trap.
@Suite(.serialized) struct FuzzRegressionTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/FuzzRegressions")

    /// (target, file) for every stored finding.
    static let findings: [Finding] = {
        let manager = FileManager.default
        guard let targets = try? manager.contentsOfDirectory(atPath: directory.path) else { return [] }
        return targets.sorted().flatMap { target -> [Finding] in
            let folder = directory.appendingPathComponent(target)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue,
                  let files = try? manager.contentsOfDirectory(atPath: folder.path) else { return [] }
            return files.sorted().filter { !$0.hasPrefix(".") && $0 != "README.md" }.map { Finding(target: target, file: $0) }
        }
    }()

    struct Finding: Sendable, CustomTestStringConvertible {
        let target: String
        let file: String
        var testDescription: String { "\(target)/\(file)" }
        var data: Data {
            get throws { try Data(contentsOf: FuzzRegressionTests.directory.appendingPathComponent("\(target)/\(file)")) }
        }
    }

    @Test(arguments: findings)
    func findingNoLongerTraps(_ finding: Finding) throws {
        let data = try finding.data
        let hash = Self.hash(data)
        let options = Self.options(hash)
        let coder: (any ImageCoder)?
        switch finding.target {
        case "png": coder = PNGCoder()
        case "gif": coder = GIFCoder()
        case "bmp": coder = BMPCoder()
        case "ico": coder = ICOCoder()
        case "jpeg": coder = JPEGCoder()
        case "webp": coder = WebPCoder()
        case "tiff": coder = TIFFCoder()
        case "heif": coder = HEIFCoder()
        case "exif":
            _ = EXIFOrientation.parse(data)
            return
        case "sniff":
            _ = ImageFormat(sniffing: data)
            return
        default:
            coder = nil
        }
        if let coder {
            _ = try? coder.decode(data, options: options)
            if let progressive = coder as? any ProgressiveImageCoder, progressive.canIncrementallyDecode(data) {
                Self.incremental(progressive.makeIncrementalDecoder(options: options), data, hash)
            }
        } else {
            _ = try? ImageCodersManager.shared.decode(data, options: options)
            if let decoder = ImageCodersManager.shared.incrementalDecoder(for: data, options: options) {
                Self.incremental(decoder, data, hash)
            }
        }
    }

    /// The stored findings are real files the replay can read (the folder may legitimately be empty).
    @Test func findingsAreReadable() throws {
        for finding in Self.findings { #expect(try !finding.data.isEmpty || finding.file.hasPrefix("empty")) }
    }

    // The same derivations as the harness (FNV-1a of the input, xorshift chunk sizes, a partial image every 8th chunk).

    static func hash(_ data: Data) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash
    }

    static func options(_ hash: UInt64) -> ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 4_000_000
        options.decodeFirstFrameOnly = hash & 1 != 0
        if hash & 6 == 2 { options.thumbnailPixelSize = CGSize(width: 17, height: 13) }
        return options
    }

    static func incremental(_ decoder: any IncrementalImageDecoder, _ data: Data, _ hash: UInt64) {
        var state = hash | 1
        var offset = data.startIndex
        var chunks = 0
        while offset < data.endIndex {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            let size = Int(state % 4096) + 1
            let end = data.index(offset, offsetBy: size, limitedBy: data.endIndex) ?? data.endIndex
            do { try decoder.append(data[offset..<end], isFinal: false) } catch { return }
            chunks += 1
            if chunks % 8 == 1 { _ = decoder.currentImage() }
            offset = end
        }
        do { try decoder.append(Data(), isFinal: true) } catch { return }
        _ = decoder.currentImage()
    }
}

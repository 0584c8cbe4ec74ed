import Foundation
import Testing
import TestRequirements
@testable import Decoding

extension JPEGCoderTests {
    // MARK: Hostile input

    @Test("decompression bomb is rejected at the header, also incrementally", .requires(.corpus))
    func bomb() throws {
        let data = try Corpus.data("generated/bomb_jpeg_65500x65500.jpg")
        #expect(throws: ImageDecodingError.tooLarge(width: 65500, height: 65500)) {
            try coder.decode(data, options: .init())
        }
        let decoder = coder.makeIncrementalDecoder(options: .init())
        #expect(throws: ImageDecodingError.tooLarge(width: 65500, height: 65500)) {
            try decoder.append(data, isFinal: false)
        }
        // The decoder stays failed.
        #expect(throws: ImageDecodingError.tooLarge(width: 65500, height: 65500)) {
            try decoder.append(Data(), isFinal: true)
        }
        // A tighter limit rejects an ordinary photo the same way.
        let photo = try Corpus.data("generated/photo_444.jpg")
        #expect(throws: ImageDecodingError.tooLarge(width: 640, height: 480)) {
            try coder.decode(photo, options: ImageDecodingOptions(maximumPixelCount: 640 * 480 - 1))
        }
    }

    @Test("a file cut right after its scan header throws .truncated", .requires(.corpus))
    func cutAfterScanHeader() throws {
        let data = try Corpus.data("generated/photo_444.jpg")
        let sos = try #require(JPEGMarkers.segments(in: data).first { $0.marker == 0xDA })
        let cut = data.prefix(sos.end)
        #expect(throws: ImageDecodingError.truncated) { try coder.decode(cut, options: .init()) }
        // A few hundred bytes of scan data already give rows: partial image, not an error.
        let partial = try coder.decode(data.prefix(sos.end + 4000), options: .init())
        #expect(partial.isIncomplete)
    }

    @Test("zero height in the frame header throws .zeroPixels", .requires(.corpus))
    func zeroHeight() throws {
        var data = try Corpus.data("generated/photo_444.jpg")
        let sof = try #require(JPEGMarkers.segments(in: data).first { $0.marker == 0xC0 })
        // SOF payload: precision, height (2 bytes), width (2 bytes), ...
        data[sof.payload + 1] = 0
        data[sof.payload + 2] = 0
        #expect(throws: ImageDecodingError.zeroPixels) { try coder.decode(data, options: .init()) }
    }

    @Test("more than 500 progressive scans is an error, not a CPU bomb")
    func scanCap() throws {
        // 500 valid scans decode; the 501st is refused (each scan is a pass over every coefficient).
        let ok = try coder.decode(Self.progressiveDCScans(500), options: .init())
        #expect(ok.width == 8 && ok.height == 8 && !ok.isIncomplete)
        #expect(ok.pixels.prefix(4) == [128, 128, 128, 255])
        let error = try #require(throws: ImageDecodingError.self) {
            try coder.decode(Self.progressiveDCScans(501), options: .init())
        }
        #expect(error == .corrupt("more than 500 progressive scans"))
        let decoder = coder.makeIncrementalDecoder(options: .init())
        #expect(throws: ImageDecodingError.corrupt("more than 500 progressive scans")) {
            try decoder.append(Self.progressiveDCScans(600), isFinal: false)
        }
    }

    /// An 8x8 gray progressive JPEG whose only content is the same full-precision DC scan repeated:
    /// valid and warning-free (Ah = Al = 0 each time), so only the scan cap can stop it.
    static func progressiveDCScans(_ count: Int) -> Data {
        var b: [UInt8] = [0xFF, 0xD8]
        b += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)           // DQT 0: all ones
        b += [0xFF, 0xC2, 0x00, 0x0B, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01, 0x11, 0x00]  // SOF2 8x8 gray
        b += [0xFF, 0xC4, 0x00, 0x14, 0x00, 0x01] + [UInt8](repeating: 0, count: 15) + [0x00]  // DHT DC 0: "0" -> 0
        for _ in 0..<count {
            b += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00]  // SOS: DC, Ah = Al = 0
            b += [0x7F]  // code "0" (difference 0), padded with ones
        }
        b += [0xFF, 0xD9]
        return Data(b)
    }

    @Test("more than 1000 corrupt-data warnings is an error", .requires(.corpus))
    func warningCap() throws {
        let data = try Corpus.data("generated/photo_444.jpg")
        // Each comment segment preceded by a stray byte costs one "extraneous bytes" warning.
        func withJunkSegments(_ count: Int) -> Data {
            var junk = Data()
            for _ in 0..<count { junk.append(contentsOf: [0x00, 0xFF, 0xFE, 0x00, 0x02]) }
            return data.prefix(2) + junk + data.dropFirst(2)
        }
        let tolerated = try coder.decode(withJunkSegments(900), options: .init())
        #expect(SHA256.hex(tolerated.pixels) == Corpus.expected["generated/photo_444.jpg"]?.sha256_rgba)
        let error = try #require(throws: ImageDecodingError.self) {
            try coder.decode(withJunkSegments(1100), options: .init())
        }
        guard case .corrupt(let why) = error else {
            Issue.record("expected .corrupt, got \(error)")
            return
        }
        #expect(why.hasPrefix("more than 1000 corrupt-data warnings"), "\(why)")
    }
}

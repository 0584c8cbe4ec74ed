import Foundation
import Decoding
import Testing

/// Coders for the downloader tests.
///
/// The downloader is tested through `ImageCodersManager`'s pluggable coder API: the package's real coders
/// (`ImageCodersManager.shared`; PNG and JPEG are always linked) decode, and tests that need to see every byte
/// a decoder gets put the test PNG coder below in front of them.
enum TestCoders {
    /// A manager with the shared coders plus `coder` asked first (a fresh coder isolates one test's decoders).
    static func manager(with coder: any ImageCoder) -> ImageCodersManager {
        let manager = ImageCodersManager(coders: ImageCodersManager.shared.coders)
        manager.addCoder(coder)
        return manager
    }

    /// The shared manager's coder for the fixture `name` (the real PNG or JPEG coder), to wrap in a test coder.
    static func sharedCoder(decoding name: String) -> (any ImageCoder)? {
        guard let data = try? Data(contentsOf: fixtureFile(name)) else { return nil }
        return ImageCodersManager.shared.coders.last { $0.canDecode(data) }
    }

    static func fixtureFile(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Support/Fixtures/\(name)")
    }
}

/// A test double standing in for a PNG coder: reads the size from IHDR, needs the IEND chunk (else
/// `.truncated`), and fills the pixels with a value derived from every byte, so equal pixels mean equal input.
/// Its incremental decoder records every byte it is given, so tests can check that the downloader feeds ONE
/// decoder with each byte exactly once.
final class HeaderPNGTestCoder: ProgressiveImageCoder, @unchecked Sendable {  // `lock` guards `decoders`
    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private let lock = NSLock()
    private var decoders: [Incremental] = []

    /// Every incremental decoder this coder made (use a fresh coder per test to isolate them).
    func incrementalDecoders() -> [Incremental] { lock.withLock { decoders } }

    func canDecode(_ data: Data) -> Bool {
        data.count >= 8 && Array(data.prefix(8)) == Self.signature
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let (width, height) = try Self.header(data)
        try options.checkDimensions(width: width, height: height)
        guard data.count >= 12, data.suffix(12).starts(with: [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44]) else {
            throw ImageDecodingError.truncated
        }
        var sum: UInt8 = 0
        for byte in data { sum = sum &+ byte }
        return DecodedImage(
            width: width, height: height, pixels: [UInt8](repeating: sum, count: width * height * 4), format: .png)
    }

    static func header(_ data: Data) throws -> (Int, Int) {
        guard data.count >= 24 else { throw ImageDecodingError.truncated }
        let bytes = Array(data[data.startIndex + 16 ..< data.startIndex + 24])
        let width = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        let height = bytes[4..<8].reduce(0) { $0 << 8 | Int($1) }
        return (width, height)
    }

    func canIncrementallyDecode(_ data: Data) -> Bool { canDecode(data) }

    func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder {
        let decoder = Incremental(coder: self, options: options)
        lock.withLock { decoders.append(decoder) }
        return decoder
    }

    final class Incremental: IncrementalImageDecoder, @unchecked Sendable {  // used from one coder queue; `lock` guards reads from tests
        private let coder: HeaderPNGTestCoder
        private let options: ImageDecodingOptions
        private let lock = NSLock()
        private var buffer = Data()
        private var image: DecodedImage?
        private(set) var appendCalls = 0

        init(coder: HeaderPNGTestCoder, options: ImageDecodingOptions) {
            self.coder = coder
            self.options = options
        }

        var received: Data { lock.withLock { buffer } }

        func append(_ data: Data, isFinal: Bool) throws {
            let all: Data = lock.withLock {
                buffer.append(data)
                appendCalls += 1
                return buffer
            }
            if isFinal {
                image = try coder.decode(all, options: options)
            } else if let (width, height) = try? HeaderPNGTestCoder.header(all), width > 0, height > 0,
                      width * height <= options.maximumPixelCount {
                image = DecodedImage(
                    width: width, height: height, pixels: [UInt8](repeating: 0, count: width * height * 4),
                    format: .png, isIncomplete: true)
            }
        }

        func currentImage() -> DecodedImage? { image }
    }
}

/// Decodes anything to a 0×0 image: the downloader must turn that into `.badImageData`.
struct ZeroPixelTestCoder: ImageCoder {
    func canDecode(_ data: Data) -> Bool { true }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        DecodedImage(width: 0, height: 0, pixels: [], format: .undefined)
    }
}

import Foundation
import Decoding
import OperationDownloader

/// A transformer for tests: a stable key and a closure.
struct TestTransformer: ImageTransformer {
    let key: String
    let body: @Sendable (DecodedImage) throws -> DecodedImage

    init(key: String, _ body: @escaping @Sendable (DecodedImage) throws -> DecodedImage) {
        self.key = key
        self.body = body
    }

    func transform(_ image: DecodedImage) throws -> DecodedImage { try body(image) }

    /// Crops to the top-left `width` × `height` pixels (marks the output unmistakably).
    static func crop(_ width: Int, _ height: Int) -> TestTransformer {
        TestTransformer(key: "crop(\(width)x\(height))") { image in
            let w = min(width, image.width), h = min(height, image.height)
            var pixels = [UInt8]()
            pixels.reserveCapacity(w * h * 4)
            for row in 0..<h {
                let start = row * image.width * 4
                pixels += image.pixels[start..<start + w * 4]
            }
            return DecodedImage(width: w, height: h, pixels: pixels, format: image.format, isIncomplete: image.isIncomplete)
        }
    }
}

/// What a transformer threw, to check that the caller gets exactly that error.
struct TransformerFailure: Error, Equatable {
    let reason: String
}

/// Wraps a coder and records the options of every one-shot decode and every incremental decoder made.
final class CountingCoder: ProgressiveImageCoder, @unchecked Sendable {  // `lock` guards both logs
    private let base: any ImageCoder
    private let lock = NSLock()
    private var decodes: [ImageDecodingOptions] = []
    private var incremental: [ImageDecodingOptions] = []

    init(base: any ImageCoder) {
        self.base = base
    }

    /// The shared manager's coder for `fixture` (the real PNG or JPEG coder).
    static func wrapping(fixture: String) -> CountingCoder? {
        TestCoders.sharedCoder(decoding: fixture).map(CountingCoder.init(base:))
    }

    var oneShotDecodes: [ImageDecodingOptions] { lock.withLock { decodes } }
    var incrementalDecoders: [ImageDecodingOptions] { lock.withLock { incremental } }

    func canDecode(_ data: Data) -> Bool { base.canDecode(data) }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        lock.withLock { decodes.append(options) }
        return try base.decode(data, options: options)
    }

    func canIncrementallyDecode(_ data: Data) -> Bool {
        (base as? any ProgressiveImageCoder)?.canIncrementallyDecode(data) ?? false
    }

    func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder {
        lock.withLock { incremental.append(options) }
        // Only reached when `canIncrementallyDecode` said yes, so the base is progressive.
        guard let progressive = base as? any ProgressiveImageCoder else { return FailingIncrementalDecoder() }
        return progressive.makeIncrementalDecoder(options: options)
    }
}

/// Never produces an image (a stand-in that cannot be reached in practice).
final class FailingIncrementalDecoder: IncrementalImageDecoder {
    func append(_ data: Data, isFinal: Bool) throws { throw ImageDecodingError.unsupportedFormat }
    func currentImage() -> DecodedImage? { nil }
}

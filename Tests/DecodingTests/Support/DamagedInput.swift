import Foundation
import Testing
@testable import Decoding

/// A failure a decoder may report: an `ImageDecodingError`, or `UnsupportedImageFeature` for a well-formed
/// feature this machine cannot decode (a bit flip can turn a progressive JPEG's SOF2 into lossless SOF3).
func isTypedDecodingError(_ error: any Error) -> Bool {
    error is ImageDecodingError || error is UnsupportedImageFeature
}

/// How a decode of damaged input ended.
enum DamagedDecodeOutcome: Equatable {
    case image, typedError, untypedError
}

/// Decodes damaged input and accepts only the two ends a coder may reach: a consistent image (a
/// width × height × 4 pixel buffer, every frame the same size) or a typed error (`isTypedDecodingError`). Any other error
/// is recorded as an issue. A trap would kill the test process, so returning at all is half the check.
@discardableResult
func expectImageOrTypedError(
    _ label: String = "", sourceLocation: SourceLocation = #_sourceLocation, _ decode: () throws -> DecodedImage
) -> DamagedDecodeOutcome {
    do {
        let image = try decode()
        #expect(image.pixels.count == image.width * image.height * 4, "\(label): inconsistent image", sourceLocation: sourceLocation)
        #expect(image.frames.allSatisfy { $0.pixels.count == image.pixels.count }, "\(label): inconsistent frames",
                sourceLocation: sourceLocation)
        return .image
    } catch where isTypedDecodingError(error) {
        return .typedError
    } catch {
        Issue.record("\(label): untyped error \(error)", sourceLocation: sourceLocation)
        return .untypedError
    }
}

/// `data` with `bits` random single bits flipped, none in the first `keepingFirst` bytes (a format's
/// signature, kept so that the copy still reaches the coder under test).
func flippingBits(of data: Data, bits: Int, keepingFirst start: Int, using random: inout SeededRandom) -> Data {
    var bytes = [UInt8](data)
    guard bytes.count > start else { return data }
    for _ in 0..<bits {
        let at = start + Int(random.next() % UInt64(bytes.count - start))
        bytes[at] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
    }
    return Data(bytes)
}

/// Decodes `copies` bit-flipped copies of `data` (see `flippingBits`) with `coder`, each of which must give
/// a consistent image or an `ImageDecodingError`.
func expectBitFlippedCopiesDecodeOrThrowTyped(
    _ data: Data, with coder: some ImageCoder, copies: Int, bitsPerCopy: Int, keepingFirst start: Int = 0,
    using random: inout SeededRandom, _ label: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(data.count > start, "\(label): too short to mutate", sourceLocation: sourceLocation)
    for _ in 0..<copies {
        let damaged = flippingBits(of: data, bits: bitsPerCopy, keepingFirst: start, using: &random)
        expectImageOrTypedError(label, sourceLocation: sourceLocation) { try coder.decode(damaged, options: ImageDecodingOptions()) }
    }
}

import Foundation
import TestRequirements
import Testing
@testable import Decoding

/// Lossless JPEG (SOF3, issue 20): decoded where the linked libjpeg-turbo has lossless support (3.0+), otherwise a
/// typed `UnsupportedImageFeature` naming lossless JPEG and the version it needs — never `.corrupt`.
@Suite(.offThePool) struct LosslessJPEGTests {
    /// libjpeg-turbo 3.0 added the 12- and 16-bit entry points together with lossless mode: their presence in the
    /// process is the capability (the one-shot and incremental paths link the same library).
    static let libjpegDecodesLossless = dlsym(nil, "jpeg16_read_scanlines") != nil

    static let file = "jpeg-lossless-sof3.jpg"

    @Test func losslessJPEGDecodesExactlyOrNamesTheLibjpegTurboItNeeds() throws {
        let data = try FormatVariants.data(Self.file)
        let entry = try #require(FormatVariants.expected[Self.file])
        let oneShot = Result { try ImageCodersManager.shared.decode(data) }
        let chunked = IncrementalConformanceTests.decodeInChunks(data, seed: 3)
        if Self.libjpegDecodesLossless {
            // Lossless: the reference is the samples the generator wrote.
            #expect(SHA256.hex(try oneShot.get().pixels) == entry.sha256_rgba)
            #expect(try chunked.get().pixels == oneShot.get().pixels)
        } else {
            let expected = UnsupportedImageFeature(
                format: .jpeg, feature: "lossless JPEG (SOF3)",
                requirement: "libjpeg-turbo 3.0 or later (this build links \(CodecLibraries.jpeg))")
            #expect(throws: expected) { try oneShot.get() }
            #expect(throws: expected) { try chunked.get() }
            #expect(expected.description.contains("lossless JPEG") && expected.description.contains("libjpeg-turbo 3.0"))
        }
    }

    @Test func hierarchicalJPEGIsATypedUnsupportedFeatureEverywhere() throws {
        // The same file with its SOF3 marker turned into SOF7 (differential lossless): no libjpeg-turbo decodes it.
        var bytes = [UInt8](try FormatVariants.data(Self.file))
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC3 })
        bytes[sof + 1] = 0xC7
        #expect(throws: UnsupportedImageFeature(format: .jpeg, feature: "hierarchical or differential JPEG (SOF7)",
                                                requirement: "a JPEG decoder with hierarchical mode (libjpeg-turbo has none)")) {
            try ImageCodersManager.shared.decode(Data(bytes))
        }
    }
}

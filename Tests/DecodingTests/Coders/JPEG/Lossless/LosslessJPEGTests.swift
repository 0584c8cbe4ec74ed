import Foundation
import TestRequirements
import Testing
@testable import Decoding

/// Lossless JPEG (SOF3): decoded by the linked libjpeg-turbo where it can (3.0+) and by `LosslessJPEGDecoder`
/// where it refuses the frame (Debian 12's 2.1.5), to the same samples. Every kind of the format variants
/// (jpeg-lossless-*: predictors 1-7, point transform, restart intervals, a scan per component, 4/8/12/16 bits,
/// JFIF YCbCr) is also checked one-shot and in chunks by `FormatVariantTests`.
@Suite(.offThePool) struct LosslessJPEGTests {
    /// libjpeg-turbo 3.0 added the 12- and 16-bit entry points together with lossless mode: their presence in the
    /// process is the capability (the one-shot and incremental paths link the same library).
    static let libjpegDecodesLossless = dlsym(nil, "jpeg16_read_scanlines") != nil

    static var files: [String] { FormatVariants.decodable.filter { $0.hasPrefix("jpeg-lossless") } }

    @Test(arguments: files)
    func theSwiftDecoderGivesTheWrittenSamples(_ name: String) throws {
        let data = try FormatVariants.data(name)
        let entry = try #require(FormatVariants.expected[name])
        let image = try LosslessJPEGDecoder(options: ImageDecodingOptions()).decode(data)
        #expect(image.width == entry.width && image.height == entry.height)
        #expect(SHA256.hex(image.pixels) == entry.sha256_rgba, "\(name)")
        #expect(!image.isIncomplete && image.format == .jpeg)
        if !Self.libjpegDecodesLossless {
            // What the manager returns is this decoder's image (libjpeg refused the frame).
            #expect(try ImageCodersManager.shared.decode(data).pixels == image.pixels)
        }
    }

    @Test func aFileCutShortDecodesAsFarAsItGoes() throws {
        let data = try FormatVariants.data("jpeg-lossless-rgb8-predictor7-restart.jpg")
        let whole = try ImageCodersManager.shared.decode(data)
        var sawPartial = false
        for cut in stride(from: 3, to: data.count, by: 7) {  // from FF D8 FF: what is recognised as JPEG
            let prefix = data.prefix(cut)
            switch Result(catching: { try ImageCodersManager.shared.decode(prefix) }) {
            case .success(let image):
                #expect(image.isIncomplete && image.width == whole.width, "cut at \(cut)")
                sawPartial = true
                // The chunked decoder buffers a lossless file and agrees with the one-shot decode.
                let chunked = try IncrementalConformanceTests.decodeInChunks(prefix, seed: UInt64(cut)).get()
                let same = chunked.pixels == image.pixels && chunked.isIncomplete
                #expect(same, "cut at \(cut): chunked differs")
            case .failure(let error):
                #expect(error as? ImageDecodingError == .truncated, "cut at \(cut): \(error)")
            }
        }
        #expect(sawPartial)
        // The rows before the cut are the whole image's: the first row of a file cut in its last rows.
        let late = try ImageCodersManager.shared.decode(data.prefix(data.count - 20))
        #expect(Array(late.pixels.prefix(whole.width * 4)) == Array(whole.pixels.prefix(whole.width * 4)))
    }

    @Test func arithmeticLosslessNamesTheLibjpegTurboItNeeds() throws {
        // The SOF3 file with its marker made SOF11 (arithmetic lossless): the Swift decoder does not take it.
        var bytes = [UInt8](try FormatVariants.data("jpeg-lossless-sof3.jpg"))
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC3 })
        bytes[sof + 1] = 0xCB
        let result = Result { try ImageCodersManager.shared.decode(Data(bytes)) }
        if Self.libjpegDecodesLossless {
            #expect(throws: (any Error).self) { try result.get() }  // arithmetic data that is really Huffman: corrupt
        } else {
            #expect(throws: UnsupportedImageFeature(format: .jpeg, feature: "lossless JPEG (SOF11)",
                                                    requirement: "libjpeg-turbo 3.0 or later (this build links \(CodecLibraries.jpeg))")) {
                try result.get()
            }
        }
    }

    @Test func unsupportedLosslessLayoutsAreTypedErrors() throws {
        var bytes = [UInt8](try FormatVariants.data("jpeg-lossless-sof3.jpg"))
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC3 })
        // Component 2 sampled 2×1: subsampling in a lossless frame.
        var subsampled = bytes
        subsampled[sof + 2 + 2 + 6 + 3 + 1] = 0x21
        #expect(throws: UnsupportedImageFeature(format: .jpeg, feature: "lossless JPEG with subsampled components",
                                                requirement: "libjpeg-turbo 3.0 or later")) {
            try LosslessJPEGDecoder(options: ImageDecodingOptions()).decode(Data(subsampled))
        }
        // Height 0: defined later by a DNL marker.
        bytes[sof + 5] = 0
        bytes[sof + 6] = 0
        #expect(throws: UnsupportedImageFeature(format: .jpeg, feature: "lossless JPEG with a DNL marker",
                                                requirement: "a JPEG decoder that reads the height from DNL")) {
            try LosslessJPEGDecoder(options: ImageDecodingOptions()).decode(Data(bytes))
        }
    }

    @Test func theFrameIsCheckedAgainstThePixelLimit() throws {
        let data = try FormatVariants.data("jpeg-lossless-sof3.jpg")  // 19×13
        #expect(throws: ImageDecodingError.tooLarge(width: 19, height: 13)) {
            try LosslessJPEGDecoder(options: ImageDecodingOptions(maximumPixelCount: 100)).decode(data)
        }
    }

    @Test func hierarchicalJPEGIsATypedUnsupportedFeatureEverywhere() throws {
        // The same file with its SOF3 marker turned into SOF7 (differential lossless): no libjpeg-turbo decodes it.
        var bytes = [UInt8](try FormatVariants.data("jpeg-lossless-sof3.jpg"))
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC3 })
        bytes[sof + 1] = 0xC7
        #expect(throws: UnsupportedImageFeature(format: .jpeg, feature: "hierarchical or differential JPEG (SOF7)",
                                                requirement: "a JPEG decoder with hierarchical mode (libjpeg-turbo has none)")) {
            try ImageCodersManager.shared.decode(Data(bytes))
        }
    }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Progressive previews of colour-managed images (issue 22): every preview is colour-correct (its pixels are
/// exactly the unconverted preview converted), previews convert only what changed, and the final image is
/// identical to the one-shot decode.
@Suite(.offThePool) struct ProgressiveColorTests {
    static let p3 = ICCProfileBuilder.rgb("Display P3", chromaticities: [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060],
                                          curve: .sRGB).data

    /// A colourful 320×240 image, encoded by the package as a baseline or progressive JPEG, with `profile`
    /// inserted as an APP2 ICC_PROFILE marker after SOI.
    static func taggedJPEG(progressive: Bool, profile: Data = p3) throws -> Data {
        let (w, h) = (320, 240)
        var pixels = [UInt8](repeating: 255, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                pixels[i] = UInt8(x * 255 / (w - 1))
                pixels[i + 1] = UInt8(y * 255 / (h - 1))
                pixels[i + 2] = UInt8((x * 7 + y * 3) & 255)
            }
        }
        let image = DecodedImage(width: w, height: h, pixels: pixels, format: .jpeg)
        let jpeg = try ImageCodersManager.shared.encode(image, options: ImageEncodingOptions(format: .jpeg, quality: 0.9, progressive: progressive))
        let payload = Array("ICC_PROFILE".utf8) + [0, 1, 1] + [UInt8](profile)
        let length = payload.count + 2
        let marker: [UInt8] = [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Data([0xFF, 0xD8] + marker + [UInt8](jpeg.dropFirst(2)))
    }

    /// Feeds `data` in `chunk`-byte pieces to a converting and a `.keepOriginal` incremental decoder in lockstep,
    /// comparing every preview. Returns the converting decoder's final image and how many previews it showed.
    static func lockstep(_ data: Data, chunk: Int, name: String) throws -> (final: DecodedImage, previews: Int) {
        let converting = try #require(ImageCodersManager.shared.incrementalDecoder(for: data, options: ImageDecodingOptions()))
        let keeping = try #require(ImageCodersManager.shared.incrementalDecoder(for: data, options: ImageDecodingOptions(colorManagement: .keepOriginal)))
        var previews = 0
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + chunk)
            let piece = data.subdata(in: offset..<end)
            try converting.append(piece, isFinal: end == data.count)
            try keeping.append(piece, isFinal: end == data.count)
            offset = end
            guard end < data.count, let shown = converting.currentImage(), var reference = keeping.currentImage() else { continue }
            previews += 1
            #expect(reference.iccProfile != nil, "\(name): the unconverted preview lost its profile")
            ColorManagement.convertToSRGB(&reference)
            guard case .convertedToSRGB = shown.colorState else {
                Issue.record("\(name): preview \(previews) at byte \(end) not converted: \(shown.colorState)")
                continue
            }
            #expect(shown.iccProfile == nil)
            #expect(shown.pixels == reference.pixels, "\(name): preview \(previews) at byte \(end) differs from its unconverted twin converted")
        }
        return (try #require(converting.currentImage()), previews)
    }

    static func checkFinal(_ data: Data, chunk: Int, name: String) throws {
        let (final, previews) = try lockstep(data, chunk: chunk, name: name)
        let oneShot = try ImageCodersManager.shared.decode(data)
        #expect(previews > 0, "\(name): no preview to check")
        #expect(final.pixels == oneShot.pixels && final.colorState == oneShot.colorState, "\(name): final differs from one-shot")
        guard case .convertedToSRGB = oneShot.colorState else { Issue.record("\(name): \(oneShot.colorState)"); return }
    }

    @Test func baselineJPEGPreviews() throws {
        try Self.checkFinal(try Self.taggedJPEG(progressive: false), chunk: 700, name: "baseline JPEG")
    }

    @Test func progressiveJPEGPreviews() throws {
        try Self.checkFinal(try Self.taggedJPEG(progressive: true), chunk: 900, name: "progressive JPEG")
    }

    /// PNG converts in `IncrementalColorConversion` (the JPEG coder converts rows itself).
    @Test func pngPreviews() throws {
        try Self.checkFinal(try DecoderFixtures.data("color_displayp3.png"), chunk: 300, name: "color_displayp3.png")
    }

    /// Adam7 (rows rewritten by every pass) and a file that ends halfway.
    @Test(.requires(.corpus))
    func interlacedTruncatedPNGPreviews() throws {
        let data = try Corpus.data("generated/trunc_adam7_50pct.png")
        let (final, previews) = try Self.lockstep(data, chunk: 4096, name: "trunc_adam7_50pct.png")
        let oneShot = try ImageCodersManager.shared.decode(data)
        #expect(previews > 0)
        #expect(final.pixels == oneShot.pixels && final.colorState == oneShot.colorState && final.isIncomplete)
    }

    /// A plain PNG's previews convert each row once: rows already converted are not touched again, so a preview
    /// the caller still holds keeps its pixels while later rows arrive.
    @Test func pngRowsAreConvertedOnceAndEarlierPreviewsStayIntact() throws {
        let data = try DecoderFixtures.data("color_displayp3.png")
        let decoder = try #require(ImageCodersManager.shared.incrementalDecoder(for: data, options: ImageDecodingOptions()))
        let half = data.count / 2
        try decoder.append(data.prefix(half), isFinal: false)
        let early = try #require(decoder.currentImage())
        let earlyPixels = early.pixels
        try decoder.append(data.suffix(from: half), isFinal: true)
        let final = try #require(decoder.currentImage())
        #expect(early.pixels == earlyPixels, "a held preview changed")
        let oneShot = try ImageCodersManager.shared.decode(data)
        #expect(final.pixels == oneShot.pixels)
    }

    /// Thumbnails and `.scaleDownLargeImages` convert after shrinking: converting the shrunk, unconverted decode
    /// gives exactly the managed decode.
    @Test(arguments: [false, true])
    func conversionFollowsShrinking(_ progressive: Bool) throws {
        let data = try Self.taggedJPEG(progressive: progressive)
        for options in [ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 100, height: 100)),
                        ImageDecodingOptions(scaleDownLimitBytes: 100 * 70 * 4),
                        ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 80, height: 80), shrinkOnLoad: .fit)] {
            let managed = try ImageCodersManager.shared.decode(data, options: options)
            var keep = options
            keep.colorManagement = .keepOriginal
            var later = try ImageCodersManager.shared.decode(data, options: keep)
            #expect(later.width == managed.width && later.height == managed.height)
            ColorManagement.convertToSRGB(&later)
            #expect(later.pixels == managed.pixels, "\(options)")
            guard case .convertedToSRGB = managed.colorState else { Issue.record("\(managed.colorState)"); continue }
        }
    }
}

import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Colour management (issue 17): embedded colour spaces converted to sRGB through lcms2, checked against
/// Pillow ImageCms (lcms2) references made by Tests/Support/DecoderFixtures/make_color_fixtures.py, with ΔE2000.
@Suite(.serialized, .offThePool) struct ColorManagementTests {

    /// Fixture, and what the decoder must say it converted from.
    static let fixtures: [(file: String, from: String)] = [
        ("color_adobergb.jpg", "ICC profile"), ("color_displayp3.png", "Display P3"),
        ("color_prophoto.webp", "ProPhoto"), ("color_cmyk.jpg", "Test press CMYK"), ("color_gama10.png", "PNG gAMA 1.00000"),
    ]

    static func reference(_ file: String) throws -> DecodedImage {
        let name = file.split(separator: ".").dropLast().joined(separator: ".") + ".srgb.png"
        return try PNGCoder().decode(try DecoderFixtures.data(name), options: ImageDecodingOptions())
    }

    @Test(.requires(.lcms2, .libwebp), arguments: fixtures.map(\.file))
    func convertedPixelsMatchTheLCMSReference(_ file: String) throws {
        let image = try ImageCodersManager.shared.decode(try DecoderFixtures.data(file))
        let reference = try Self.reference(file)
        #expect(image.width == reference.width && image.height == reference.height)
        // Docs/Decoding.md: ΔE2000 0.00 (mean, p99 and max) against Pillow's lcms2 conversion.
        let delta = DeltaE2000.summary(image.pixels, reference.pixels)
        #expect(delta.max < 0.005, "\(file): ΔE2000 mean \(delta.mean), p99 \(delta.p99), max \(delta.max)")
        guard case .convertedToSRGB(let from) = image.colorState else {
            Issue.record("\(file): \(image.colorState)")
            return
        }
        let expected = try #require(Self.fixtures.first { $0.file == file }?.from)
        #expect(from.contains(expected), "\(file): converted from \(from)")
        #expect(image.iccProfile == nil)
    }

    @Test(.requires(.lcms2, .libwebp), arguments: fixtures.map(\.file))
    func chunkedDecodingConvertsTheSame(_ file: String) throws {
        let data = try DecoderFixtures.data(file)
        let oneShot = try ImageCodersManager.shared.decode(data)
        let chunked = try IncrementalConformanceTests.decodeInChunks(data, seed: stableSeed(file)).get()
        #expect(chunked.pixels == oneShot.pixels && chunked.colorState == oneShot.colorState)
    }

    @Test(.requires(.libwebp))
    func keepOriginalHandsBackTheProfileAndThePixelsAsDecoded() throws {
        let options = ImageDecodingOptions(colorManagement: .keepOriginal)
        for file in ["color_adobergb.jpg", "color_displayp3.png", "color_prophoto.webp"] {
            let data = try DecoderFixtures.data(file)
            let kept = try ImageCodersManager.shared.decode(data, options: options)
            let raw = try #require(ImageCodersManager.shared.coders.reversed().first { $0.canDecode(data) }).decode(data, options: options)
            #expect(kept.pixels == raw.pixels, "\(file)")
            #expect((kept.iccProfile?.count ?? 0) > 128, "\(file): no profile handed back")
            guard case .notConverted(let reason) = kept.colorState else { Issue.record("\(file): \(kept.colorState)"); continue }
            #expect(reason.contains("keepOriginal"))
            // The public API finishes the job later (a thumbnailer that decoded with .keepOriginal).
            var later = kept
            ColorManagement.convertToSRGB(&later)
            #expect(later.pixels == (try ImageCodersManager.shared.decode(data)).pixels, "\(file)")
        }
    }

    @Test(.requires(.lcms2))
    func thumbnailsAreConvertedAfterScaling() throws {
        let data = try DecoderFixtures.data("color_cmyk.jpg")
        let thumb = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 16, height: 16)))
        #expect(thumb.width == 16 && thumb.height == 12)
        guard case .convertedToSRGB = thumb.colorState else { Issue.record("\(thumb.colorState)"); return }
        let full = try ImageCodersManager.shared.decode(data)
        let reference = ImageScaler.resize(full, width: 16, height: 12)
        #expect(DeltaE2000.summary(thumb.pixels, reference.pixels).mean <= 2)
    }

    @Test func untaggedAndSRGBImagesCostNothingAndStaySRGB() throws {
        let image = try ImageCodersManager.shared.decode(try Data(contentsOf: DecoderFixtures.directory
            .deletingLastPathComponent().appendingPathComponent("Fixtures/baseline.jpg")))
        #expect(image.colorState == .sRGB && image.iccProfile == nil)
    }

    /// An embedded sRGB profile (Pillow's sample: 3144 bytes, "sRGB IEC61966-2.1") is recognised as sRGB: no
    /// transform, pixels untouched. (This used to read TestJFIF.jpg, whose profile is Display P3, and compared
    /// only if the colour state happened to be sRGB: it never compared anything.)
    @Test(.requires(.lcms2, .corpus))
    func anEmbeddedSRGBProfileLeavesThePixelsUntouched() throws {
        let data = try Corpus.data("pillow/pil_sample_rgb.jpg")
        let managed = try ImageCodersManager.shared.decode(data)
        let kept = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect((kept.iccProfile?.count ?? 0) > 128, "the file has an embedded profile")
        #expect(managed.colorState == .sRGB)
        // A Bool, not `pixels == pixels` inside #expect: a failure would diff the two arrays element by element.
        let untouched = managed.pixels == kept.pixels
        #expect(untouched)
    }

    /// A matrix/TRC profile needs no lcms2 (the fast path); a LUT-based one without lcms2 stays as decoded.
    @Test func withoutLCMSLUTProfilesStayAsDecodedWithAReason() throws {
        let profile = try #require(try Self.embeddedProfile("color_adobergb.jpg"))
        guard case .matrix = ColorManagement.resolve(.icc(profile, cmyk: nil), soname: "liblcms2-not-installed.so.9") else {
            Issue.record("a matrix/TRC profile must convert without lcms2")
            return
        }
        let cmyk = try #require(try Self.embeddedProfile("color_cmyk.jpg"))
        guard case .failure(let reason) = ColorManagement.resolve(.icc(cmyk, cmyk: true), soname: "liblcms2-not-installed.so.9") else {
            Issue.record("a missing lcms2 must be a failure with a reason")
            return
        }
        #expect(reason.contains("liblcms2-not-installed.so.9") && reason.contains("install liblcms2-2"))
    }

    @Test(.requires(.lcms2))
    func hostileProfilesFallBackWithAReason() throws {
        var rng = SeededRandom(seed: 17)
        let profile = [UInt8](try #require(try Self.embeddedProfile("color_adobergb.jpg")))
        let decoded = try JPEGCoder().decode(try DecoderFixtures.data("color_adobergb.jpg"), options: ImageDecodingOptions())
        for round in 0..<200 {
            var bytes = profile
            if round % 4 == 0 { bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count)))) }
            for _ in 0..<(1 + Int(rng.next() % 8)) where !bytes.isEmpty {
                bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
            var image = decoded
            image.iccProfile = Data(bytes)
            ColorManagement.convertToSRGB(&image)
            #expect(image.pixels.count == decoded.pixels.count)
            if case .notConverted(let reason) = image.colorState { #expect(!reason.isEmpty) }
        }
        var garbage = decoded
        garbage.iccProfile = Data("not a profile at all, but long enough to be looked at by lcms2 ....".utf8)
        ColorManagement.convertToSRGB(&garbage)
        #expect(garbage.pixels == decoded.pixels)
        #expect(garbage.colorState == .notConverted(reason: "unreadable ICC profile (67 bytes)"))
    }

    /// `OD_DELTA_E_REPORT=1 swift test --filter deltaEReport`: the table in Docs/Decoding.md (ΔE2000 against
    /// the lcms2 reference, unconverted and converted, and the conversion cost per megapixel).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["OD_DELTA_E_REPORT"] != nil, "a report, on request"), .requires(.lcms2))
    func deltaEReport() throws {
        try Requirement.check(.lcms2)
        for (file, _) in Self.fixtures {
            let data = try DecoderFixtures.data(file)
            let reference = try Self.reference(file)
            let before = DeltaE2000.summary(
                try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal)).pixels,
                reference.pixels)
            let after = DeltaE2000.summary(try ImageCodersManager.shared.decode(data).pixels, reference.pixels)
            print(String(format: "| %@ | %.2f | %.2f | %.2f | %.2f | %.2f |", file, before.mean, before.p99, after.mean, after.p99, after.max))
        }
        // Cost: an 8 MP RGBA buffer through a cached Adobe RGB transform, median of 5.
        let image = DecodedImage(width: 4000, height: 2000, pixels: (0..<32_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) },
                                 format: .jpeg, iccProfile: try Self.embeddedProfile("color_adobergb.jpg"))
        var times: [Double] = []
        for _ in 0..<5 {
            var copy = image
            let start = DispatchTime.now().uptimeNanoseconds
            ColorManagement.convertToSRGB(&copy)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / 8)
        }
        print(String(format: "conversion: %.2f ms per megapixel (median of 5)", times.sorted()[2]))
    }

    /// The profile a coder reports for a fixture (pixels as decoded).
    /// The 1/8 DC-only JPEG path (shrink-on-load) returns before libjpeg runs: its pixels must still be converted.
    @Test(.requires(.lcms2))
    func shrinkOnLoadFastPathIsConvertedToo() throws {
        let data = try DecoderFixtures.data("color_adobergb.jpg")
        let shrink = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 8, height: 6), shrinkOnLoad: .fit)
        let converted = try ImageCodersManager.shared.decode(data, options: shrink)
        #expect(converted.width == 8 && converted.height == 6)
        guard case .convertedToSRGB = converted.colorState else {
            Issue.record("shrink-on-load decode not converted: \(converted.colorState)")
            return
        }
        var kept = shrink
        kept.colorManagement = .keepOriginal
        var later = try ImageCodersManager.shared.decode(data, options: kept)
        #expect(later.iccProfile != nil)
        ColorManagement.convertToSRGB(&later)
        #expect(later.pixels == converted.pixels)
    }

    static func embeddedProfile(_ file: String) throws -> Data? {
        try JPEGCoder().decode(try DecoderFixtures.data(file), options: ImageDecodingOptions(colorManagement: .keepOriginal)).iccProfile
    }
}

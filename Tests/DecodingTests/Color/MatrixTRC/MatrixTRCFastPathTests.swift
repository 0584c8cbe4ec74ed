import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// The matrix/TRC fast path against lcms2 itself (the same library Pillow and the previous path use), on
/// synthetic profiles (gamma, parametric and sampled curves; several primaries and white points) and on the
/// colour test images. Synthetic profiles: every pixel identical to lcms2's; gray profiles and the colour test
/// images: ΔE2000 mean ≤ 0.5 and p99 ≤ 1 (issue 22's goal).
@Suite(.offThePool) struct MatrixTRCFastPathTests {
    /// White, red, green, blue as CIE xy.
    static let primaries: [(String, [Double])] = [
        ("sRGB", [0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06]),
        ("Display P3", [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]),
        ("Adobe RGB", [0.3127, 0.3290, 0.64, 0.33, 0.21, 0.71, 0.15, 0.06]),
        ("ProPhoto (D50 white)", [0.3457, 0.3585, 0.7347, 0.2653, 0.1596, 0.8404, 0.0366, 0.0001]),
        ("BT.2020", [0.3127, 0.3290, 0.708, 0.292, 0.170, 0.797, 0.131, 0.046]),
        ("NTSC 1953 (illuminant C)", [0.310, 0.316, 0.67, 0.33, 0.21, 0.71, 0.14, 0.08]),
        ("DCI-P3 (DCI white)", [0.314, 0.351, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]),
    ]

    static let curves: [(String, ICCProfileBuilder.Curve)] = [
        ("gamma 1.0", .gamma(1.0)), ("gamma 1.8", .gamma(1.8)), ("gamma 2.2", .gamma(2.2)), ("gamma 2.6", .gamma(2.6)),
        ("identity curv", .identity),
        ("sRGB para 3", .sRGB),
        ("para 1 (CIE 122)", .parametric(1, [2.2, 1.0, 0.0])),
        ("para 2 (IEC 61966-3)", .parametric(2, [2.4, 1.05, -0.05, 0.0])),
        ("para 4 (with e, f)", .parametric(4, [2.2, 0.947, 0.052, 0.077, 0.04, 0.002, 0.0])),
        ("sampled sRGB 1024", .sampledSRGB(1024)),
        ("sampled gamma 2.2 256", .sampled((0..<256).map { UInt16((pow(Double($0) / 255, 2.2) * 65535).rounded()) })),
        ("sampled 2 points", .sampled([0, 65535])),
    ]

    /// Every 8-bit level on the gray axis, and a 33-level cube (35,937 colours: saturated ones included).
    static let samplePixels: [UInt8] = {
        var pixels: [UInt8] = []
        for v in 0...255 { pixels += [UInt8(v), UInt8(v), UInt8(v), 255] }
        let levels = (0...32).map { UInt8(min(255, $0 * 8)) }
        for r in levels { for g in levels { for b in levels { pixels += [r, g, b, 200] } } }
        return pixels
    }()

    static var syntheticCases: [String] {
        primaries.flatMap { p in curves.map { "\(p.0) / \($0.0)" } }
    }

    static func profile(_ name: String) -> Data? {
        let parts = name.components(separatedBy: " / ")
        guard parts.count == 2, let xy = primaries.first(where: { $0.0 == parts[0] })?.1,
              let curve = curves.first(where: { $0.0 == parts[1] })?.1 else { return nil }
        return ICCProfileBuilder.rgb(name, chromaticities: xy, curve: curve).data
    }

    /// Converts `pixels` through the fast path and through lcms2 (the same profile bytes).
    static func bothWays(_ profile: Data, _ pixels: [UInt8]) throws -> (fast: [UInt8], lcms: [UInt8]) {
        var fast = pixels, lcms = pixels
        let fastResolution = try ColorManagement.matrixResolution(icc: profile)
        guard case .matrix(let matrix) = fastResolution else {
            // sRGB-equivalent profiles: nothing to compare but the identity.
            #expect(fastResolution.convertsFrom == nil)
            return (pixels, pixels)
        }
        matrix.apply(to: &fast)
        let reference = ColorManagement.resolveWithLCMS(.icc(profile, cmyk: nil), soname: ColorManagement.soname)
        switch reference {
        case .transform(let transform): transform.apply(inPlace: &lcms)
        case .identity: break
        default: Issue.record("lcms2 refused the profile: \(reference)")
        }
        return (fast, lcms)
    }

    @Test(.requires(.lcms2), arguments: syntheticCases)
    func syntheticProfilesMatchLCMS(_ name: String) throws {
        let profile = try #require(Self.profile(name))
        let (fast, lcms) = try Self.bothWays(profile, Self.samplePixels)
        // Decoding.md's claim: every pixel identical to lcms2's (not merely close).
        let differing = stride(from: 0, to: fast.count, by: 4).filter { fast[$0..<$0 + 3] != lcms[$0..<$0 + 3] }.count
        let delta = DeltaE2000.summary(fast, lcms)
        #expect(differing == 0, "\(name): \(differing) of \(fast.count / 4) pixels differ from lcms2's (ΔE2000 mean \(delta.mean), max \(delta.max))")
        // Alpha is kept.
        #expect(stride(from: 3, to: fast.count, by: 4).allSatisfy { fast[$0] == Self.samplePixels[$0] })
    }

    @Test(.requires(.lcms2), arguments: ["gamma 2.2", "sRGB para 3", "sampled gamma 2.2 256"])
    func grayProfilesMatchLCMS(_ curveName: String) throws {
        let curve = try #require(Self.curves.first { $0.0 == curveName }?.1)
        let profile = ICCProfileBuilder.gray("gray \(curveName)", curve: curve).data
        let gray: [UInt8] = (0...255).flatMap { v -> [UInt8] in [UInt8(v), UInt8(v), UInt8(v), 255] }
        let (fast, lcms) = try Self.bothWays(profile, gray)
        let delta = DeltaE2000.summary(fast, lcms)
        #expect(delta.mean <= 0.5 && delta.p99 <= 1, "gray \(curveName): ΔE2000 mean \(delta.mean), p99 \(delta.p99)")
    }

    /// The images of the colour tests: decoded with the fast path (the default) against the pixels as decoded
    /// converted by lcms2 from the same embedded profile.
    @Test(.requires(.lcms2, .libwebp), arguments: ["color_adobergb.jpg", "color_displayp3.png", "color_prophoto.webp"])
    func colourTestImagesMatchLCMS(_ file: String) throws {
        let data = try DecoderFixtures.data(file)
        try Self.compareImage(data, name: file)
    }

    @Test(.requires(.lcms2, .corpus))
    func displayP3PhotoMatchesLCMS() throws {
        let data = try #require(Corpus.root.flatMap { FileManager.default.contents(atPath: $0.appendingPathComponent("sdwebimage/TestJFIF.jpg").path) })
        let thumb = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 1024, height: 1024))
        try Self.compareImage(data, name: "TestJFIF.jpg (Display P3)", options: thumb)
    }

    static func compareImage(_ data: Data, name: String, options: ImageDecodingOptions = ImageDecodingOptions()) throws {
        let converted = try ImageCodersManager.shared.decode(data, options: options)
        var keep = options
        keep.colorManagement = .keepOriginal
        let kept = try ImageCodersManager.shared.decode(data, options: keep)
        let profile = try #require(kept.iccProfile)
        guard case .matrix = try ColorManagement.matrixResolution(icc: profile) else {
            Issue.record("\(name): the fast path did not take its profile")
            return
        }
        guard case .transform(let lcms) = ColorManagement.resolveWithLCMS(.icc(profile, cmyk: nil), soname: ColorManagement.soname) else {
            Issue.record("\(name): lcms2 refused the profile")
            return
        }
        var reference = kept.pixels
        lcms.apply(inPlace: &reference)
        let delta = DeltaE2000.summary(converted.pixels, reference)
        #expect(delta.mean <= 0.5 && delta.p99 <= 1, "\(name): ΔE2000 mean \(delta.mean), p99 \(delta.p99), max \(delta.max)")
        guard case .convertedToSRGB = converted.colorState else {
            Issue.record("\(name): \(converted.colorState)")
            return
        }
    }
}

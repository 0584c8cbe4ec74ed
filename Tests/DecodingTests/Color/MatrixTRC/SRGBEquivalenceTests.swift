import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Profiles that are sRGB in effect convert nothing and report `colorState == .sRGB` (issue 22): colorants and
/// curves within `MatrixTRCProfile.sRGBTolerance` (0.002) of sRGB's. Decided by the package's own ICC reader,
/// so it holds without lcms2 too.
@Suite(.offThePool) struct SRGBEquivalenceTests {
    static let sRGB = [0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06]

    static func isSRGB(_ profile: Data) throws -> Bool {
        try MatrixTRCProfile(try ICCProfile(profile)).isSRGBEquivalent
    }

    /// HP's sRGB IEC61966-2.1 colorants as printed in that profile (4 decimals, D50-adapted).
    static let hpColorants: [[Double]] = [[0.4361, 0.2225, 0.0139], [0.3851, 0.7169, 0.0971], [0.1431, 0.0606, 0.7141]]

    static let equivalent: [(String, Data)] = {
        var hp = ICCProfileBuilder(name: "sRGB IEC61966-2.1", version: 2)
        hp.colorants = hpColorants
        hp.curves = Array(repeating: .sampledSRGB(1024), count: 3)
        var slightlyOff = ICCProfileBuilder.rgb("sRGB, colorants 0.0015 off", chromaticities: sRGB, curve: .sRGB)
        slightlyOff.colorants[0][0] += 0.0015
        return [
            ("parametric v4", ICCProfileBuilder.rgb("sRGB v4", chromaticities: sRGB, curve: .sRGB).data),
            ("HP-style v2, 1024-point curves", hp.data),
            ("4096-point curves", ICCProfileBuilder.rgb("sRGB 4096", chromaticities: sRGB, curve: .sampledSRGB(4096)).data),
            ("colorants 0.0015 off", slightlyOff.data),
            ("gray with the sRGB curve", ICCProfileBuilder.gray("sGray", curve: .sRGB).data),
        ]
    }()

    static let different: [(String, Data)] = {
        var off = ICCProfileBuilder.rgb("sRGB, colorants 0.004 off", chromaticities: sRGB, curve: .sRGB)
        off.colorants[1][1] -= 0.004
        var bentCurve = ICCProfileBuilder.Curve.sampledSRGB(1024)
        if case .sampled(var table) = bentCurve {
            for i in 400..<600 { table[i] = table[i] &+ 400 }  // +0.006 in the midtones
            bentCurve = .sampled(table)
        }
        return [
            ("Display P3 primaries", ICCProfileBuilder.rgb("Display P3", chromaticities: [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060], curve: .sRGB).data),
            ("sRGB primaries, gamma 2.2", ICCProfileBuilder.rgb("gamma 2.2", chromaticities: sRGB, curve: .gamma(2.2)).data),
            ("sRGB primaries, gamma 1.0", ICCProfileBuilder.rgb("linear", chromaticities: sRGB, curve: .gamma(1)).data),
            ("colorants 0.004 off", off.data),
            ("midtones of the curve 0.006 off", ICCProfileBuilder.rgb("bent", chromaticities: sRGB, curve: bentCurve).data),
            ("gray gamma 2.2", ICCProfileBuilder.gray("gray 2.2", curve: .gamma(2.2)).data),
        ]
    }()

    @Test(arguments: equivalent.map(\.0))
    func sRGBVariantsAreRecognised(_ name: String) throws {
        let profile = try #require(Self.equivalent.first { $0.0 == name }?.1)
        #expect(try Self.isSRGB(profile), "\(name)")
        // Decoding converts nothing: pixels as decoded, reported sRGB, no profile handed back.
        let decoded = try JPEGCoder().decode(try DecoderFixtures.data("color_adobergb.jpg"), options: ImageDecodingOptions())
        var image = decoded
        image.iccProfile = profile
        ColorManagement.convertToSRGB(&image)
        #expect(image.colorState == .sRGB && image.iccProfile == nil)
        #expect(image.pixels == decoded.pixels)
    }

    @Test(arguments: different.map(\.0))
    func otherColourSpacesAreNot(_ name: String) throws {
        let profile = try #require(Self.different.first { $0.0 == name }?.1)
        #expect(try !Self.isSRGB(profile), "\(name)")
        guard case .matrix = try ColorManagement.matrixResolution(icc: profile) else {
            Issue.record("\(name): not taken by the fast path")
            return
        }
    }

    /// Real profiles from the corpus: three sRGB variants (HP's IEC61966-2.1, the ICC's sRGB2014, Apple's compact
    /// 456-byte one) and a Display P3 one.
    @Test(.requires(.corpus), arguments: [
        ("pillow/pil_sample_rgb.jpg", true), ("libjpeg-turbo/monkey16.png", true), ("sdwebimage/TestHDR.jpeg", true),
        ("sdwebimage/TestJFIF.jpg", false),
    ])
    func corpusProfiles(_ file: String, _ sRGB: Bool) throws {
        let data = try Corpus.data(file)
        let kept = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(
            thumbnailPixelSize: CGSize(width: 64, height: 64), colorManagement: .keepOriginal))
        let profile = try #require(kept.iccProfile, "\(file) has no profile")
        #expect(try Self.isSRGB(profile) == sRGB, "\(file)")
        let managed = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(thumbnailPixelSize: CGSize(width: 64, height: 64)))
        if sRGB {
            #expect(managed.colorState == .sRGB && managed.pixels == kept.pixels, "\(file): \(managed.colorState)")
        } else {
            guard case .convertedToSRGB = managed.colorState else { Issue.record("\(file): \(managed.colorState)"); return }
        }
    }
}

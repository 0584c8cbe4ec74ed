import Foundation
import TestRequirements
import Testing
@testable import Decoding

/// The package's own ICC reader (`ICCProfile`, `ICCToneCurve`, `MatrixTRCProfile`) on hostile and unusual
/// profiles: a typed `ICCProfileError` (colour management then asks lcms2), never a trap.
@Suite(.offThePool) struct ICCProfileReaderTests {
    static let p3 = [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]

    static func matrixError(_ data: Data) -> ICCProfileError? {
        do {
            _ = try ColorManagement.matrixResolution(icc: data)
            return nil
        } catch {
            return error
        }
    }

    static func builder() -> ICCProfileBuilder { .rgb("Display P3", chromaticities: p3, curve: .sRGB) }

    @Test func aWellFormedProfileIsTaken() throws {
        let resolution = try ColorManagement.matrixResolution(icc: Self.builder().data)
        guard case .matrix(let transform) = resolution else { Issue.record("\(resolution)"); return }
        #expect(transform.description == "ICC profile 'Display P3'")
    }

    @Test func headerDamageIsTyped() {
        let good = [UInt8](Self.builder().data)
        #expect(Self.matrixError(Data(good.prefix(100))) == .tooShort(100))
        var noMagic = good
        noMagic[36] = 0x41
        #expect(Self.matrixError(Data(noMagic)) == .notAProfile)
        var tooMany = good
        tooMany.replaceSubrange(128..<132, with: ICCProfileBuilder.be32(5000))
        #expect(Self.matrixError(Data(tooMany)) == .tooManyTags(5000))
        var runsPast = good
        runsPast.replaceSubrange(128..<132, with: ICCProfileBuilder.be32(90))
        #expect(Self.matrixError(Data(runsPast)) == .truncatedTagTable(declared: 90))
        var tinySize = good
        tinySize.replaceSubrange(0..<4, with: ICCProfileBuilder.be32(40))
        #expect(Self.matrixError(Data(tinySize)) == .badSize(40))
    }

    @Test func tagDamageIsTyped() {
        var missing = Self.builder()
        missing.curves = Array(missing.curves.prefix(2))
        #expect(Self.matrixError(missing.data) == .missingTag("bTRC"))
        var badCurve = Self.builder()
        badCurve.extraTags = []
        badCurve.curves[1] = .parametric(9, [1])
        #expect(Self.matrixError(badCurve.data) == .malformedTag("gTRC"))
        // A curv that declares more entries than its tag holds.
        var bytes = [UInt8](Self.builder().data)
        if let at = Self.find(Array("curv".utf8), in: bytes) ?? Self.find(Array("para".utf8), in: bytes) {
            bytes.replaceSubrange(at..<(at + 12), with: Array("curv".utf8) + [0, 0, 0, 0] + ICCProfileBuilder.be32(60_000))
        }
        #expect(Self.matrixError(Data(bytes)) == .malformedTag("rTRC"))
        var hugeColorants = Self.builder()
        hugeColorants.colorants[0] = [30000, -30000, 30000]
        #expect(Self.matrixError(hugeColorants.data) == .unusableMatrix)
    }

    @Test func whatLCMSWouldTreatDifferentlyIsLeftToIt() {
        var lut = Self.builder()
        lut.extraTags = [("A2B0", Array("mft2".utf8) + [UInt8](repeating: 0, count: 60))]
        #expect(Self.matrixError(lut.data) == .notMatrixTRC("has a 'A2B0' table"))
        var lab = Self.builder()
        lab.connectionSpace = "Lab "
        #expect(Self.matrixError(lab.data) == .notMatrixTRC("connection space 'Lab '"))
        var cmyk = Self.builder()
        cmyk.colorSpace = "CMYK"
        #expect(Self.matrixError(cmyk.data) == .notMatrixTRC("colour space 'CMYK'"))
        var link = Self.builder()
        link.deviceClass = "link"
        #expect(Self.matrixError(link.data) == .notMatrixTRC("device class 'link'"))
        // A curve that does not start at black: lcms2 would compensate the black point (forced for v4 perceptual).
        var raisedBlack = Self.builder()
        raisedBlack.curves = Array(repeating: .parametric(4, [2.2, 0.95, 0.05, 0.08, 0.04, 0, 0.02]), count: 3)
        guard case .notMatrixTRC? = Self.matrixError(raisedBlack.data) else {
            Issue.record("a raised black was taken by the fast path")
            return
        }
        // CMYK samples are always lcms2's.
        #expect(ColorManagement.fastPath(.icc(Self.builder().data, cmyk: true)) == nil)
    }

    @Test func wtptAndChadAreReadAndChecked() throws {
        var withChad = Self.builder()
        let bradford = try #require(ColorMatrix3.bradfordAdaptation(from: ColorMatrix3.xyz(x: 0.3127, y: 0.3290), to: ColorMatrix3.d50))
        withChad.extraTags = [("chad", ICCProfileBuilder.signature("sf32") + [0, 0, 0, 0] + bradford.m.flatMap(ICCProfileBuilder.s15Fixed16))]
        let profile = try MatrixTRCProfile(try ICCProfile(withChad.data))
        #expect(profile.mediaWhitePoint.map { zip($0, ColorMatrix3.d50).allSatisfy { abs($0 - $1) < 0.0001 } } == true)
        #expect(profile.adaptation.map { zip($0.m, bradford.m).allSatisfy { abs($0 - $1) < 0.0001 } } == true)
        var singular = Self.builder()
        singular.extraTags = [("chad", ICCProfileBuilder.signature("sf32") + [0, 0, 0, 0] + [Double](repeating: 1, count: 9).flatMap(ICCProfileBuilder.s15Fixed16))]
        #expect(Self.matrixError(singular.data) == .malformedTag("chad"))
        var shortWhite = Self.builder()
        shortWhite.whitePoint = nil
        shortWhite.extraTags = [("wtpt", ICCProfileBuilder.signature("XYZ ") + [0, 0, 0, 0, 0, 0])]
        #expect(Self.matrixError(shortWhite.data) == .malformedTag("wtpt"))
    }

    /// Random damage (truncation, flipped bytes) to real and synthetic profiles: the reader answers, never traps;
    /// whatever transform it builds keeps alpha and the pixel count.
    @Test func mutatedProfilesNeverTrap() throws {
        var rng = SeededRandom(seed: 22)
        let seeds = [[UInt8](Self.builder().data), [UInt8](ICCProfileBuilder.gray("g", curve: .sampledSRGB(256)).data),
                     [UInt8](ICCProfileBuilder.rgb("pp", chromaticities: Self.p3, curve: .parametric(4, [2.2, 0.95, 0.05, 0.08, 0.04, 0, 0])).data)]
        let pixels: [UInt8] = (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        var taken = 0
        for round in 0..<600 {
            var bytes = seeds[round % seeds.count]
            if round % 5 == 0 { bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count)))) }
            for _ in 0..<(1 + Int(rng.next() % 6)) where !bytes.isEmpty {
                bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
            guard case .matrix(let transform)? = try? ColorManagement.matrixResolution(icc: Data(bytes)) else { continue }
            taken += 1
            var out = pixels
            transform.apply(to: &out)
            #expect(out.count == pixels.count)
            #expect(stride(from: 3, to: out.count, by: 4).allSatisfy { out[$0] == pixels[$0] })
        }
        #expect(taken > 0)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

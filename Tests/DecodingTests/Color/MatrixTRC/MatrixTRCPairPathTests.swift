import Foundation
import Testing
@testable import Decoding

/// The matrix/TRC fast path's pair path (cic_color_matrix.c: R' and G' from one table indexed by R and G, taken
/// when the profile's blue primary is sRGB's and the white D65) against its general term path, which
/// `MatrixTRCFastPathTests` holds to lcms2: the same bytes for every RGB colour, with call lengths that leave
/// tails of the eight-pixel loop, and alpha kept; the same for the opaque loop the JPEG rows take.
@Suite(.offThePool) struct MatrixTRCPairPathTests {
    static let p3 = [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]
    static let adobeRGB = [0.3127, 0.3290, 0.64, 0.33, 0.21, 0.71, 0.15, 0.06]
    static let proPhoto = [0.3457, 0.3585, 0.7347, 0.2653, 0.1596, 0.8404, 0.0366, 0.0001]
    static let bt2020 = [0.3127, 0.3290, 0.708, 0.292, 0.170, 0.797, 0.131, 0.046]

    static func transform(_ xy: [Double], _ curve: ICCProfileBuilder.Curve) throws -> MatrixTRCTransform {
        let data = ICCProfileBuilder.rgb("pair test", chromaticities: xy, curve: curve).data
        guard case .matrix(let matrix) = try ColorManagement.matrixResolution(icc: data) else {
            throw PairPathTestError.notMatrix
        }
        return matrix
    }

    enum PairPathTestError: Error { case notMatrix }

    @Test func profilesWithSRGBsBluePrimaryTakeThePairPath() throws {
        #expect(try Self.transform(Self.p3, .sRGB).hasPairPath)
        #expect(try Self.transform(Self.adobeRGB, .gamma(2.2)).hasPairPath)
        #expect(try !Self.transform(Self.proPhoto, .gamma(1.8)).hasPairPath)
        #expect(try !Self.transform(Self.bt2020, .sRGB).hasPairPath)
    }

    static func pairCase(_ name: String) throws -> MatrixTRCTransform {
        switch name {
        case "Display P3 / sRGB curve": try transform(p3, .sRGB)
        case "Display P3 / gamma 2.6": try transform(p3, .gamma(2.6))
        default: try transform(adobeRGB, .gamma(2.2))
        }
    }

    @Test(arguments: ["Display P3 / sRGB curve", "Display P3 / gamma 2.6", "Adobe RGB / gamma 2.2"], [false, true])
    func pairPathEqualsTermPathOnEveryColour(_ name: String, opaque: Bool) throws {
        let matrix = try Self.pairCase(name)
        try #require(matrix.hasPairPath, "\(name)")
        // 2^24 colours in slices of 2^20; each slice split into calls of 4,097...4,104 pixels (every tail of the
        // eight-pixel loop, all long enough for the pair path) and one short call (the term path's). Alpha varies,
        // except for the opaque loop (JPEG rows, alpha always 255).
        let slice = 1 << 20
        var mismatches = 0
        for first in stride(from: 0, to: 1 << 24, by: slice) {
            var expected = [UInt8](repeating: 0, count: slice * 4)
            for i in 0..<slice {
                let colour = first + i
                expected[i * 4] = UInt8(truncatingIfNeeded: colour)
                expected[i * 4 + 1] = UInt8(truncatingIfNeeded: colour >> 8)
                expected[i * 4 + 2] = UInt8(truncatingIfNeeded: colour >> 16)
                expected[i * 4 + 3] = opaque ? 255 : UInt8(truncatingIfNeeded: colour &* 7)
            }
            var actual = expected
            expected.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                matrix.applyTermPath(to: base, count: slice)
            }
            actual.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                var at = 0, call = 0
                while at < slice {
                    let length = min(slice - at, call % 9 == 8 ? 3 : 4097 + call % 8)
                    if opaque {
                        matrix.applyOpaque(to: base + at * 4, count: length)  // the JPEG rows' loop
                    } else {
                        matrix.apply(to: base + at * 4, count: length)
                    }
                    at += length
                    call += 1
                }
            }
            if actual != expected { mismatches += zip(actual, expected).filter { $0 != $1 }.count }
        }
        #expect(mismatches == 0, "\(name): \(mismatches) bytes differ from the term path")
    }
}

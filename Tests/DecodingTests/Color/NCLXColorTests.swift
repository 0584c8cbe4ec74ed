import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// HEIF/AVIF `nclx` colour descriptions (H.273 code points, no ICC profile): wide-gamut primaries are converted
/// to sRGB, HDR is left as decoded and says so. The reference is computed here from the H.273 chromaticities in
/// double precision (linearise, 3×3 matrix, clip, encode), independently of lcms2.
@Suite(.serialized, .offThePool) struct NCLXColorTests {

    @Test func codePointsMeanWhatH273Says() {
        #expect(NCLXColor(primaries: 1, transfer: 13).meaning == .sRGB)
        #expect(NCLXColor(primaries: 2, transfer: 2).meaning == .sRGB)  // unspecified
        #expect(NCLXColor(primaries: 1, transfer: 1).meaning == .sRGB)  // BT.709 video curve: taken as sRGB's
        #expect(NCLXColor(primaries: 99, transfer: 13).meaning == .sRGB)  // unknown primaries: BT.709's
        guard case .source(.chromaticities(let xy, let gamma, let description)) = NCLXColor(primaries: 12, transfer: 13).meaning else {
            Issue.record("Display P3 is not converted")
            return
        }
        #expect(xy == [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060] && gamma == 0)
        #expect(description.contains("nclx 12/13"))
        guard case .source(.chromaticities(_, let linear, _)) = NCLXColor(primaries: 1, transfer: 8).meaning else {
            Issue.record("linear BT.709 is not converted")
            return
        }
        #expect(linear == 1)
        guard case .notConverted(let reason) = NCLXColor(primaries: 9, transfer: 16).meaning else {
            Issue.record("PQ is converted")
            return
        }
        #expect(reason.contains("PQ"))
        guard case .notConverted = NCLXColor(primaries: 10, transfer: 13).meaning else {
            Issue.record("XYZ is converted")
            return
        }
    }

    /// Pillow's AVIF (nclx 1/13/6) with its primaries byte set to 12: the same stored values, now Display P3.
    @Test(.requires(.corpus, .libheif, .lcms2))
    func displayP3PrimariesAreConvertedToSRGB() throws {
        let original = try Corpus.data("pillow/avif_hopper.avif")
        let p3 = try Self.withPrimaries(12, original)
        let asStored = try ImageCodersManager.shared.decode(original)
        #expect(asStored.colorState == .sRGB)
        let converted = try ImageCodersManager.shared.decode(p3)
        guard case .convertedToSRGB(let from) = converted.colorState else {
            Issue.record("\(converted.colorState)")
            return
        }
        #expect(from.contains("nclx 12/13"))
        let reference = Self.p3ToSRGB(asStored.pixels)
        let delta = DeltaE2000.summary(converted.pixels, reference)
        // Docs/Decoding.md: within ΔE2000 0.025 mean / 0.65 p99 of the independent reference (measured 0.023 / 0.609).
        #expect(delta.mean <= 0.025 && delta.p99 <= 0.65, "ΔE2000 mean \(delta.mean), p99 \(delta.p99)")
        #expect(DeltaE2000.summary(asStored.pixels, reference).mean > 1, "the conversion changes the colours")

        let kept = try ImageCodersManager.shared.decode(p3, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(kept.pixels == asStored.pixels)
        #expect(!kept.colorState.isSRGB)
    }

    @Test(.requires(.corpus, .libheif, .lcms2))
    func hdrIsLeftAsDecodedAndSaysSo() throws {
        let image = try ImageCodersManager.shared.decode(try Corpus.data("sdwebimage/TestHDR.avif"))
        guard case .notConverted(let reason) = image.colorState else {
            Issue.record("\(image.colorState)")
            return
        }
        #expect(reason.contains("PQ"))
    }

    /// `data` with the primaries of its (first) nclx colr box replaced.
    static func withPrimaries(_ primaries: UInt8, _ data: Data) throws -> Data {
        var bytes = [UInt8](data)
        let marker = Array("colrnclx".utf8)
        let start = try #require((0...(bytes.count - marker.count - 2)).first { Array(bytes[$0..<$0 + marker.count]) == marker })
        bytes[start + marker.count] = 0
        bytes[start + marker.count + 1] = primaries
        return Data(bytes)
    }

    /// Display P3 RGBA8 to sRGB: both D65 with the sRGB curve, so one matrix between linear values.
    static func p3ToSRGB(_ pixels: [UInt8]) -> [UInt8] {
        let p3 = rgbToXYZ(NCLXColor.chromaticities[12] ?? [])
        let srgb = rgbToXYZ(NCLXColor.chromaticities[1] ?? [])
        let matrix = multiply(inverse(srgb), p3)
        func linear(_ v: UInt8) -> Double {
            let c = Double(v) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        func encoded(_ v: Double) -> UInt8 {
            let c = min(1, max(0, v))
            let e = c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1 / 2.4) - 0.055
            return UInt8((e * 255).rounded())
        }
        var out = pixels
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let rgb = (0..<3).map { linear(pixels[i + $0]) }
            for row in 0..<3 {
                out[i + row] = encoded((0..<3).reduce(0) { $0 + matrix[row][$1] * rgb[$1] })
            }
        }
        return out
    }

    /// The RGB → XYZ matrix of primaries and white given as xy (white, red, green, blue).
    static func rgbToXYZ(_ xy: [Double]) -> [[Double]] {
        func xyz(_ x: Double, _ y: Double) -> [Double] { [x / y, 1, (1 - x - y) / y] }
        let white = xyz(xy[0], xy[1])
        let primaries = [xyz(xy[2], xy[3]), xyz(xy[4], xy[5]), xyz(xy[6], xy[7])]
        let columns = (0..<3).map { row in (0..<3).map { primaries[$0][row] } }
        let inverted = inverse(columns)
        let scale = (0..<3).map { row in (0..<3).reduce(0) { $0 + inverted[row][$1] * white[$1] } }
        return (0..<3).map { row in (0..<3).map { columns[row][$0] * scale[$0] } }
    }

    static func multiply(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        (0..<3).map { row in (0..<3).map { column in (0..<3).reduce(0) { $0 + a[row][$1] * b[$1][column] } } }
    }

    static func inverse(_ m: [[Double]]) -> [[Double]] {
        let determinant = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        func cofactor(_ r: Int, _ c: Int) -> Double {
            let rows = (0..<3).filter { $0 != r }, columns = (0..<3).filter { $0 != c }
            let minor = m[rows[0]][columns[0]] * m[rows[1]][columns[1]] - m[rows[0]][columns[1]] * m[rows[1]][columns[0]]
            return (r + c) % 2 == 0 ? minor : -minor
        }
        return (0..<3).map { row in (0..<3).map { column in cofactor(column, row) / determinant } }
    }
}

import Foundation
@testable import Decoding

/// Writes small ICC profiles for tests, byte by byte (ICC.1:2010): RGB or gray matrix/TRC display profiles with
/// chosen primaries, white point and curves, plus the raw pieces hostile-input tests break on purpose.
struct ICCProfileBuilder {
    enum Curve {
        case gamma(Double)                        // curv with one entry (u8Fixed8)
        case parametric(Int, [Double])            // para of that ICC function type
        case sampled([UInt16])                    // curv table
        case identity                             // curv with no entry

        /// sRGB's curve as a v4 para type 3, as most sRGB profiles carry it.
        static let sRGB = Curve.parametric(3, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])

        /// sRGB's curve sampled at `count` points, as HP's sRGB IEC61966-2.1 profile (1024).
        static func sampledSRGB(_ count: Int) -> Curve {
            .sampled((0..<count).map { i in
                let x = Double(i) / Double(count - 1)
                let y = x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
                return UInt16((y * 65535).rounded())
            })
        }
    }

    var name = "test profile"
    var version: UInt8 = 4
    var deviceClass = "mntr"
    var colorSpace = "RGB "
    var connectionSpace = "XYZ "
    /// rXYZ, gXYZ, bXYZ (D50-adapted, as ICC requires).
    var colorants: [[Double]] = []
    var curves: [Curve] = []
    var whitePoint: [Double]? = ColorMatrix3.d50
    var extraTags: [(String, [UInt8])] = []

    /// A matrix/TRC RGB profile for primaries and white as CIE xy (white, red, green, blue), adapted to D50 with
    /// Bradford as lcms2's cmsCreateRGBProfile does.
    static func rgb(_ name: String, chromaticities xy: [Double], curve: Curve, version: UInt8 = 4) -> ICCProfileBuilder {
        let matrix = ColorMatrix3.rgbToD50(chromaticities: xy) ?? .identity
        var builder = ICCProfileBuilder(name: name, version: version)
        builder.colorants = (0..<3).map { c in (0..<3).map { matrix[$0, c] } }
        builder.curves = [curve, curve, curve]
        return builder
    }

    static func gray(_ name: String, curve: Curve) -> ICCProfileBuilder {
        var builder = ICCProfileBuilder(name: name, colorSpace: "GRAY")
        builder.curves = [curve]
        return builder
    }

    var data: Data {
        var tags: [(String, [UInt8])] = [("desc", Self.desc(name))]
        if let whitePoint { tags.append(("wtpt", Self.xyz(whitePoint))) }
        if colorSpace == "GRAY" {
            tags.append(("kTRC", Self.curve(curves[0])))
        } else {
            for (tag, value) in zip(["rXYZ", "gXYZ", "bXYZ"], colorants) { tags.append((tag, Self.xyz(value))) }
            for (tag, curve) in zip(["rTRC", "gTRC", "bTRC"], curves) { tags.append((tag, Self.curve(curve))) }
        }
        tags += extraTags
        var body: [UInt8] = []
        var table: [UInt8] = Self.be32(UInt32(tags.count))
        let dataStart = 128 + 4 + 12 * tags.count
        for (signature, bytes) in tags {
            while (dataStart + body.count) % 4 != 0 { body.append(0) }
            table += Self.signature(signature) + Self.be32(UInt32(dataStart + body.count)) + Self.be32(UInt32(bytes.count))
            body += bytes
        }
        var header = [UInt8](repeating: 0, count: 128)
        let total = 128 + table.count + body.count
        header.replaceSubrange(0..<4, with: Self.be32(UInt32(total)))
        header[8] = version
        header.replaceSubrange(12..<16, with: Self.signature(deviceClass))
        header.replaceSubrange(16..<20, with: Self.signature(colorSpace))
        header.replaceSubrange(20..<24, with: Self.signature(connectionSpace))
        header.replaceSubrange(36..<40, with: Self.signature("acsp"))
        header.replaceSubrange(68..<80, with: Self.xyz(ColorMatrix3.d50).suffix(12))
        return Data(header + table + body)
    }

    // MARK: - Encoding

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func signature(_ s: String) -> [UInt8] { Array(s.utf8.prefix(4)) + [UInt8](repeating: 32, count: max(0, 4 - s.utf8.count)) }
    static func s15Fixed16(_ v: Double) -> [UInt8] { be32(UInt32(bitPattern: Int32((v * 65536).rounded()))) }

    static func xyz(_ v: [Double]) -> [UInt8] { signature("XYZ ") + [0, 0, 0, 0] + v.flatMap(s15Fixed16) }

    static func desc(_ text: String) -> [UInt8] {
        let ascii = Array(text.utf8) + [0]
        return signature("desc") + [0, 0, 0, 0] + be32(UInt32(ascii.count)) + ascii + [UInt8](repeating: 0, count: 12 + 67)
    }

    static func curve(_ curve: Curve) -> [UInt8] {
        switch curve {
        case .identity:
            return signature("curv") + [0, 0, 0, 0] + be32(0)
        case .gamma(let g):
            return signature("curv") + [0, 0, 0, 0] + be32(1) + be16(UInt16((g * 256).rounded()))
        case .sampled(let table):
            return signature("curv") + [0, 0, 0, 0] + be32(UInt32(table.count)) + table.flatMap(be16)
        case .parametric(let type, let parameters):
            return signature("para") + [0, 0, 0, 0] + be16(UInt16(type)) + [0, 0] + parameters.flatMap(s15Fixed16)
        }
    }
}

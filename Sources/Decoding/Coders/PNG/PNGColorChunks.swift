import CImageCodecs
import Foundation

/// The colour chunks of a PNG (iCCP, sRGB, gAMA, cHRM), read as the PNG specification and browsers rank them:
/// sRGB means sRGB; else an ICC profile; else gAMA/cHRM describe the colour space.
struct PNGColorChunks {
    /// Compressed iCCP payloads above this are skipped (real profiles are a few KB to a few hundred KB).
    static let maximumCompressedProfile = 1 << 20
    /// An inflated profile may not exceed this.
    static let maximumProfile = 16 << 20
    /// sRGB's white point and primaries (cHRM values / 100000).
    static let sRGBChromaticities: [Double] = [0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06]

    private var isSRGB = false
    private var profile: Data?
    private var gamma: Int?
    private var chromaticities: [Double]?

    mutating func record(_ type: PNGChunkType, data: [UInt8]) {
        switch type {
        case .sRGB:
            isSRGB = true
        case .iCCP where profile == nil:
            profile = Self.inflateProfile(data)
        case .gAMA where gamma == nil && data.count == 4:
            let value = Self.be32(data, 0)
            if value > 0 { gamma = value }
        case .cHRM where chromaticities == nil && data.count == 32:
            chromaticities = stride(from: 0, to: 32, by: 4).map { Double(Self.be32(data, $0)) / 100_000 }
        default:
            break
        }
    }

    private static func be32(_ b: [UInt8], _ i: Int) -> Int {
        let high = Int(b[i]) << 24 | Int(b[i + 1]) << 16
        return high | Int(b[i + 2]) << 8 | Int(b[i + 3])
    }

    /// `image` with the colour information these chunks give (pixels untouched).
    func tag(_ image: DecodedImage) -> DecodedImage {
        var tagged = image
        if isSRGB { return tagged }
        if let profile {
            tagged.iccProfile = profile
        } else if let source {
            tagged.colorSource = source
        } else {
            return tagged
        }
        tagged.colorState = .awaitingConversion
        return tagged
    }

    /// gAMA/cHRM as a colour description; nil when absent or equivalent to sRGB (gAMA 0.45455 with no cHRM or
    /// sRGB's, the values the PNG specification gives for sRGB images).
    private var source: ColorSource? {
        guard gamma != nil || chromaticities != nil else { return nil }
        let xy = chromaticities ?? Self.sRGBChromaticities
        let sRGBPrimaries = zip(xy, Self.sRGBChromaticities).allSatisfy { abs($0 - $1) < 0.0015 }
        if let gamma, abs(gamma - 45455) <= 500, sRGBPrimaries { return nil }
        let decodingGamma = gamma.map { 100_000 / Double($0) } ?? 0
        var parts: [String] = []
        if let gamma { parts.append(String(format: "gAMA %.5f", Double(gamma) / 100_000)) }
        if chromaticities != nil { parts.append("cHRM") }
        return .chromaticities(xy: xy, gamma: decodingGamma, description: "PNG " + parts.joined(separator: " + "))
    }

    /// The iCCP profile: a Latin-1 name, a NUL, compression method 0, then zlib data. nil when damaged.
    static func inflateProfile(_ data: [UInt8]) -> Data? {
        guard let nul = data.prefix(80).firstIndex(of: 0), nul + 2 < data.count, data[nul + 1] == 0 else { return nil }
        let compressed = data[(nul + 2)...]
        var capacity = min(maximumProfile, max(4096, compressed.count * 8))
        while true {
            var out = [UInt8](repeating: 0, count: capacity)
            let produced = compressed.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { cic_inflate(src.baseAddress, src.count, $0.baseAddress, $0.count) }
            }
            if produced > 0 { return Data(out.prefix(produced)) }
            guard produced == -2, capacity < maximumProfile else { return nil }
            capacity = min(maximumProfile, capacity * 4)
        }
    }
}

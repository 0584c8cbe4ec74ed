/// An nclx colour description (HEIF/AVIF `colr` box of type `nclx`): ITU-T H.273 code points instead of an ICC
/// profile. What it means for the decoded RGB pixels:
/// - primaries: the H.273 table below (BT.709 and "unspecified" are sRGB's);
/// - transfer: the SDR video curves (BT.709, BT.601, BT.2020, sRGB, unspecified) are taken as the sRGB curve, so
///   only the gamut is converted, as for display-referred images; gamma 2.2 / 2.8 and linear are converted;
/// - HDR (PQ, HLG), logarithmic and XYZ content is left as decoded, saying so: converting it needs tone mapping.
struct NCLXColor: Equatable {
    let primaries: Int
    let transfer: Int

    /// What colour management should do with the pixels.
    enum Meaning: Equatable {
        /// Already sRGB (or as good as): nothing to convert.
        case sRGB
        /// Convert from these chromaticities and decoding gamma (`ColorSource.chromaticities`).
        case source(ColorSource)
        /// Leave the pixels as decoded, for this reason.
        case notConverted(String)
    }

    var meaning: Meaning {
        let name = "nclx \(primaries)/\(transfer)"
        let gamma: Double
        switch transfer {
        case 4: gamma = 2.2
        case 5: gamma = 2.8
        case 8: gamma = 1
        case 16, 18: return .notConverted("HDR transfer (\(transfer == 16 ? "PQ" : "HLG"), \(name)) is not tone-mapped")
        case 9, 10, 17: return .notConverted("transfer characteristics \(transfer) (\(name)) are not converted")
        default: gamma = 0  // the sRGB curve
        }
        if primaries == 10 { return .notConverted("XYZ primaries (\(name)) are not converted") }
        let xy = Self.chromaticities[primaries] ?? Self.chromaticities[1] ?? []
        if gamma == 0 && xy == Self.chromaticities[1] { return .sRGB }
        return .source(.chromaticities(xy: xy, gamma: gamma, description: "HEIF \(name) (primaries/transfer)"))
    }

    /// White, red, green and blue CIE xy by H.273 colour primaries code point (the order of PNG's cHRM).
    static let chromaticities: [Int: [Double]] = {
        let d65 = [0.3127, 0.3290], illuminantC = [0.310, 0.316]
        return [
            1: d65 + [0.640, 0.330, 0.300, 0.600, 0.150, 0.060],          // BT.709, sRGB
            4: illuminantC + [0.67, 0.33, 0.21, 0.71, 0.14, 0.08],        // BT.470 System M
            5: d65 + [0.64, 0.33, 0.29, 0.60, 0.15, 0.06],                // BT.470 System B, G; BT.601 625
            6: d65 + [0.630, 0.340, 0.310, 0.595, 0.155, 0.070],          // SMPTE 170M; BT.601 525
            7: d65 + [0.630, 0.340, 0.310, 0.595, 0.155, 0.070],          // SMPTE 240M
            8: illuminantC + [0.681, 0.319, 0.243, 0.692, 0.145, 0.049],  // generic film
            9: d65 + [0.708, 0.292, 0.170, 0.797, 0.131, 0.046],          // BT.2020, BT.2100
            11: [0.314, 0.351, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060], // SMPTE RP 431-2 (DCI-P3)
            12: d65 + [0.680, 0.320, 0.265, 0.690, 0.150, 0.060],         // SMPTE EG 432-1 (Display P3)
            22: d65 + [0.630, 0.340, 0.295, 0.605, 0.155, 0.077],         // EBU Tech 3213-E
        ]
    }()
}

import CImageCodecs
import Foundation

/// The TIFF coder's colour conversions done while reading: CIELab through lcms2 (`TIFFLabConversion`), and CMYK
/// through its embedded ICC profile, as the JPEG coder converts CMYK (Docs/Decoding.md, colour management).
extension TIFFCoder {
    /// A CIELab/ICCLab image converted to sRGB through lcms2, or nil when lcms2 is missing or the layout is not
    /// one the sample reader takes (the RGBA interface then converts with libtiff's own model).
    func decodeLab(_ file: OpaquePointer, width: UInt32, height: UInt32,
                           orientation: ImageOrientation) throws -> DecodedImage? {
        guard let lab = try? TIFFLabConversion.load(labSoname).get() else { return nil }
        var message = [CChar](repeating: 0, count: 256)
        var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * 4)
        let result = cic_tiff_read_lab(file, &pixels, width, height, &message, message.count)
        if result == -2 { return nil }
        guard result >= 0 else { throw Self.readError(stringFromCBuffer(message), firstDirectoryMissing: false) }
        lab.convert(&pixels)
        // The pixels are sRGB now: an embedded profile (describing the Lab data) no longer applies.
        return DecodedImage(width: Int(width), height: Int(height), pixels: pixels, format: .tiff,
                            orientation: orientation, isIncomplete: result == 1,
                            colorState: .convertedToSRGB(from: TIFFLabConversion.sourceDescription))
    }

    /// How a CMYK image with an ICC profile was read.
    enum CMYKOutcome {
        /// Converted to sRGB through the profile.
        case decoded(DecodedImage)
        case failed(ImageDecodingError)
        /// Not applied (`.keepOriginal`, lcms2 missing, an unusable profile, a layout the sample reader does not
        /// take): why, for `colorState`; the caller converts the inks with the naive formula.
        case notApplied(String)
    }

    /// A CMYK image converted through its embedded CMYK profile (lcms2, perceptual intent), alpha kept.
    func decodeCMYK(_ file: OpaquePointer, profile: Data, width: UInt32, height: UInt32, orientation: ImageOrientation,
                    options: ImageDecodingOptions) -> CMYKOutcome {
        guard options.colorManagement == .convertToSRGB else {
            return .notApplied("kept as decoded (colorManagement: .keepOriginal)")
        }
        let transform: ColorTransform
        switch ColorManagement.cmykTransform(profile: profile, inverted: false) {
        case .transform(let resolved): transform = resolved
        case .failure(let reason): return .notApplied(reason)
        case .identity: return .notApplied("the profile is not a CMYK profile")
        }
        var message = [CChar](repeating: 0, count: 256)
        let count = Int(width) * Int(height)
        var pixels = [UInt8](repeating: 0, count: count * 4)
        var alpha = [UInt8](repeating: 255, count: count)
        let result = cic_tiff_read_cmyk(file, &pixels, &alpha, width, height, &message, message.count)
        if result == -2 { return .notApplied("a CMYK layout the sample reader does not take") }
        guard result >= 0 else { return .failed(Self.readError(stringFromCBuffer(message), firstDirectoryMissing: false)) }
        transform.apply(inPlace: &pixels)
        for i in 0..<count { pixels[i * 4 + 3] = alpha[i] }
        return .decoded(DecodedImage(width: Int(width), height: Int(height), pixels: pixels, format: .tiff,
                                     orientation: orientation, isIncomplete: result == 1,
                                     colorState: .convertedToSRGB(from: transform.description)))
    }
}

/// Why the ICC reader (`ICCProfile`, `ICCToneCurve`, `MatrixTRCProfile`) did not take a profile. Colour
/// management then hands the profile to lcms2, which may still convert it (LUT-based profiles) or say why not.
enum ICCProfileError: Error, Equatable, CustomStringConvertible {
    /// Fewer bytes than a header and a tag count.
    case tooShort(Int)
    /// No `acsp` signature at byte 36.
    case notAProfile
    /// The header's size field is smaller than a header.
    case badSize(Int)
    /// More tags than lcms2 reads (100).
    case tooManyTags(Int)
    /// The tag table runs past the end of the profile.
    case truncatedTagTable(declared: Int)
    /// A tag the fast path needs is absent.
    case missingTag(String)
    /// A tag is shorter than its type needs, or of a type that cannot be used there.
    case malformedTag(String)
    /// A curve with parameters no display profile has (non-finite, or beyond what the tables can hold).
    case unusableCurve(String)
    /// Colorants whose matrix cannot be used (not finite, or too large for the 1.14 fixed-point arithmetic).
    case unusableMatrix
    /// The profile is valid but not for the fast path (LUT-based, CMYK, Lab PCS, a black point lcms2 would
    /// compensate): lcms2 converts it.
    case notMatrixTRC(String)

    var description: String {
        switch self {
        case .tooShort(let count): return "ICC profile too short (\(count) bytes)"
        case .notAProfile: return "no ICC 'acsp' signature"
        case .badSize(let size): return "ICC profile size field \(size) is smaller than its header"
        case .tooManyTags(let count): return "ICC profile declares \(count) tags (at most 100)"
        case .truncatedTagTable(let count): return "ICC tag table of \(count) entries runs past the profile"
        case .missingTag(let tag): return "ICC profile has no '\(tag)' tag"
        case .malformedTag(let tag): return "ICC tag '\(tag)' is malformed"
        case .unusableCurve(let tag): return "ICC curve '\(tag)' cannot be tabulated"
        case .unusableMatrix: return "ICC colorants do not give a usable matrix"
        case .notMatrixTRC(let why): return "not a matrix/TRC profile: \(why)"
        }
    }
}

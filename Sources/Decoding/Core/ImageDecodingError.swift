/// Why bytes could not be turned into an image. Every decoder reports failures with these cases and
/// never traps on input.
public enum ImageDecodingError: Error, Sendable, Equatable {
    /// No registered coder recognises the bytes (sniffed by content, never by file name).
    case unsupportedFormat
    /// The data is damaged; the message names what the decoder found.
    case corrupt(String)
    /// The data ended before any pixel could be produced.
    case truncated
    /// The header declares more pixels than `ImageDecodingOptions.maximumPixelCount` allows;
    /// rejected before any pixel memory was allocated.
    case tooLarge(width: Int, height: Int)
    /// The header declares a zero width or height.
    case zeroPixels
}

extension ImageDecodingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unsupportedFormat: return "unsupported image format"
        case .corrupt(let why): return "corrupt image data: \(why)"
        case .truncated: return "image data ends before any pixels"
        case .tooLarge(let w, let h): return "image \(w)x\(h) exceeds the pixel limit"
        case .zeroPixels: return "image has zero width or height"
        }
    }
}

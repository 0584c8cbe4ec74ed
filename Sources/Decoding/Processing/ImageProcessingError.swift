/// Why a pixel operation (resize, crop, blur, ...) refused its input or parameters. Every operation throws
/// one of these instead of trapping.
public enum ImageProcessingError: Error, Sendable, Equatable {
    /// A target size with a zero, negative or absurd side.
    case invalidSize(width: Int, height: Int)
    /// A parameter outside its range; the message names it.
    case invalidParameter(String)
    /// The crop rectangle does not overlap the image.
    case emptyCrop
    /// The image's pixel buffer does not hold `width * height * 4` bytes.
    case malformedImage
}

extension ImageProcessingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidSize(let w, let h): return "invalid target size \(w)x\(h)"
        case .invalidParameter(let what): return "invalid parameter: \(what)"
        case .emptyCrop: return "the crop rectangle does not overlap the image"
        case .malformedImage: return "pixel buffer does not match the image size"
        }
    }
}

/// Why bytes could not be turned into an image. Every decoder reports failures with these cases and
/// never traps on input. A case that refuses an image because of a limit names that limit.
public enum ImageDecodingError: Error, Sendable, Equatable {
    /// No registered coder recognises the bytes (sniffed by content, never by file name).
    case unsupportedFormat
    /// The data is damaged; the message names what the decoder found.
    case corrupt(String)
    /// The data ended before any pixel could be produced.
    case truncated
    /// The header declares more pixels than `ImageDecodingOptions.maximumPixelCount` allows (for an animation:
    /// its canvas, or one frame's extent); rejected before any pixel memory was allocated.
    case tooLarge(width: Int, height: Int)
    /// The header declares a zero width or height.
    case zeroPixels
    /// The animation has more frames than `ImageDecodingOptions.maximumFrameCount` allows (a frame-count bomb).
    case tooManyFrames(limit: Int)
    /// One canvas of `width`×`height` needs `bytes` of pixel memory, more than the whole decode memory budget
    /// (`ImageDecodingBudget.limitBytes`, `budgetBytes`), and the format cannot shrink it while loading.
    case exceedsDecodingBudget(width: Int, height: Int, bytes: Int, budgetBytes: Int)
    /// An incremental decoder needs `bytes` of the decode memory budget before its final append and they are
    /// taken right now: partial decodes never wait (the downloader then decodes once, at the end, in line).
    case decodingBudgetBusy(bytes: Int, budgetBytes: Int)
    /// The decode was cancelled (`ImageDecodingCancellation`) while it waited for the decode memory budget.
    case cancelled
    /// `AnimatedImage.frame(at:)` was asked for a frame the animation does not have.
    case frameIndexOutOfRange(index: Int, frameCount: Int)
}

extension ImageDecodingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unsupportedFormat: return "unsupported image format"
        case .corrupt(let why): return "corrupt image data: \(why)"
        case .truncated: return "image data ends before any pixels"
        case .tooLarge(let w, let h): return "image \(w)x\(h) exceeds the pixel limit (maximumPixelCount)"
        case .zeroPixels: return "image has zero width or height"
        case .tooManyFrames(let limit): return "animation has more than \(limit) frames (maximumFrameCount)"
        case .exceedsDecodingBudget(let w, let h, let bytes, let budget):
            return "image \(w)x\(h) needs \(Self.mebibytes(bytes)) of pixel memory, more than the whole decode "
                + "memory budget of \(Self.mebibytes(budget)) (ImageDecodingBudget.limitBytes)"
        case .decodingBudgetBusy(let bytes, let budget):
            return "a partial decode needs \(Self.mebibytes(bytes)) of the \(Self.mebibytes(budget)) decode memory budget, "
                + "taken right now (ImageDecodingBudget); decode the complete data instead"
        case .cancelled: return "decode cancelled while waiting for the decode memory budget"
        case .frameIndexOutOfRange(let index, let count):
            return "frame \(index) out of range: the animation has \(count) frame\(count == 1 ? "" : "s")"
        }
    }

    private static func mebibytes(_ bytes: Int) -> String {
        let value = Double(bytes) / 1_048_576
        return value >= 10 ? "\(Int(value.rounded())) MiB" : String(format: "%.1f MiB", value)
    }
}

import Decoding
import Foundation

extension DecodedImage {
    /// Every frame of an animation composited on demand through `animation`, in order, with its duration;
    /// empty for a still image (what `frames` held when every decode composited eagerly).
    func animationFrames() throws -> [ImageFrame] {
        guard let animation else { return [] }
        return try (0..<animation.frameCount).map { ImageFrame(pixels: try animation.frame(at: $0), duration: animation.duration(at: $0)) }
    }
}

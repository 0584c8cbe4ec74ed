import Decoding
import Foundation

/// A Gaussian blur (SDWebImage's `SDImageBlurTransformer`; Nuke's `ImageProcessors.GaussianBlur`).
/// `sigma` is the standard deviation in pixels (0...250). Key: `blur(2.5)`.
public struct ImageBlurTransformer: ImageTransformer {
    public var sigma: Double

    public init(sigma: Double) {
        self.sigma = sigma
    }

    public var key: String { "blur(\(sigma))" }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        try image.blurred(sigma: sigma)
    }
}

/// Gray pixels, alpha kept (Rec. 709 luma on the encoded values). Key: `grayscale`.
public struct ImageGrayscaleTransformer: ImageTransformer {
    public init() {}

    public var key: String { "grayscale" }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        try image.grayscaled()
    }
}

import Foundation

extension DecodedImage {
    /// The largest blur `blurred(sigma:)` accepts, in pixels (a kernel of 6σ + 1 taps per pass).
    public static let maximumBlurSigma = 250.0

    /// A Gaussian blur with standard deviation `sigma` pixels (SDWebImage's `SDImageBlurTransformer`, whose
    /// `blurRadius` is this sigma). Separable, clamp-to-edge, in premultiplied alpha; every animation frame
    /// is blurred. `sigma` 0 returns the image unchanged.
    public func blurred(sigma: Double) throws(ImageProcessingError) -> DecodedImage {
        guard sigma.isFinite, sigma >= 0, sigma <= Self.maximumBlurSigma else {
            throw .invalidParameter("blur sigma \(sigma) (0...\(Self.maximumBlurSigma))")
        }
        _ = try validatedBufferSize()
        guard sigma > 0 else { return self }
        let kernel = Self.gaussianKernel(sigma: sigma)
        let engine = SeparableFilter(
            srcWidth: width, srcHeight: height,
            xTaps: .convolution(kernel: kernel, count: width),
            yTaps: .convolution(kernel: kernel, count: height))
        return mappingFrames(width: width, height: height) { engine.run($0) }
    }

    /// Normalised Gaussian weights over ±⌈3σ⌉, each the integral of the Gaussian over its pixel (exact for
    /// small sigma, where point samples would be too peaked).
    static func gaussianKernel(sigma: Double) -> [Double] {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        let scale = 1 / (sigma * 2.0.squareRoot())
        var kernel: [Double] = (-radius...radius).map { (i: Int) -> Double in
            let upper: Double = erf((Double(i) + 0.5) * scale)
            let lower: Double = erf((Double(i) - 0.5) * scale)
            return (upper - lower) / 2
        }
        let sum = kernel.reduce(0, +)
        for i in kernel.indices { kernel[i] /= sum }
        return kernel
    }
}

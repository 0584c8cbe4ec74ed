import Foundation

/// Downscaling: the size a decode should produce, and an area (box) filter to get there.
///
/// Coders may first shrink cheaply on their own (libjpeg's DCT scaling); `ImageCodersManager` then calls
/// `apply(_:to:)` to reach the exact target with this filter. Images are never enlarged.
public enum ImageScaler {
    /// The pixel size `options` asks for an image of `width`×`height`, or `nil` to keep it as is.
    ///
    /// Sides scaled to fit a thumbnail box are rounded to the nearest pixel, as Pillow's and libvips' thumbnails
    /// are (6000×4000 into 256×256 is 256×171; every thumbnail path of the package uses this rule, and
    /// `DecodedImage.resized(toWidth:height:mode:)` rounds the same way); a scale set by `scaleDownLimitBytes`
    /// rounds down, so the result stays within the limit.
    public static func targetSize(width: Int, height: Int, options: ImageDecodingOptions) -> (width: Int, height: Int)? {
        guard width > 0, height > 0 else { return nil }
        var scale = 1.0
        if let box = options.thumbnailPixelSize, box.width > 0 || box.height > 0 {
            let sx = box.width > 0 ? Double(box.width) / Double(width) : .infinity
            let sy = box.height > 0 ? Double(box.height) / Double(height) : .infinity
            if options.shrinkOnLoad == .cover {
                // Covering: the larger of the two scales (a side given as 0 does not constrain).
                scale = min(scale, max(sx.isFinite ? sx : 0, sy.isFinite ? sy : 0))
            } else {
                scale = min(scale, sx, sy)
            }
        }
        var rounding = FloatingPointRoundingRule.toNearestOrAwayFromZero
        if let limit = options.scaleDownLimitBytes, limit > 0 {
            let maxPixels = Double(limit / 4)
            let pixels = Double(width) * Double(height)
            if pixels > maxPixels, (maxPixels / pixels).squareRoot() < scale {
                scale = (maxPixels / pixels).squareRoot()
                rounding = .down
            }
        }
        guard scale < 1 else { return nil }
        let w = max(1, Int((Double(width) * scale).rounded(rounding)))
        let h = max(1, Int((Double(height) * scale).rounded(rounding)))
        return (w == width && h == height) ? nil : (w, h)
    }

    /// Shrinks `image` (and every frame) to what `options` asks for; returns it unchanged otherwise.
    public static func apply(_ options: ImageDecodingOptions, to image: DecodedImage) -> DecodedImage {
        guard let size = targetSize(width: image.width, height: image.height, options: finishing(options)) else { return image }
        return resize(image, width: size.width, height: size.height)
    }

    /// The options the exact-size step after a coder's own reduction works to: in shrink-on-load mode the
    /// thumbnail box is left to the caller's resize (only `scaleDownLimitBytes` still applies).
    static func finishing(_ options: ImageDecodingOptions) -> ImageDecodingOptions {
        guard options.shrinkOnLoad != nil else { return options }
        var exact = options
        exact.thumbnailPixelSize = nil
        exact.shrinkOnLoad = nil
        return exact
    }

    /// Resizes to exactly `width`×`height` with an area filter (each output pixel averages the input area it
    /// covers, weighted by alpha so transparent pixels do not darken edges). Meant for shrinking.
    public static func resize(_ image: DecodedImage, width: Int, height: Int) -> DecodedImage {
        guard width > 0, height > 0, image.width > 0, image.height > 0,
              width != image.width || height != image.height else { return image }
        let filter = AreaFilter(srcWidth: image.width, srcHeight: image.height, dstWidth: width, dstHeight: height)
        let frames = image.frames.map { ImageFrame(pixels: filter.run(on: $0.pixels), duration: $0.duration) }
        let first = frames.first?.pixels ?? filter.run(on: image.pixels)
        let step = FramePipeline.Step(label: "resize \(width)x\(height)", width: width, height: height) { filter.run(on: $0) }
        return image.replacingPixels(width: width, height: height, pixels: first, frames: frames,
                                     animation: image.animation(after: step, mappedFrames: frames, loopCount: image.loopCount))
    }
}

/// A separable area filter: per output column (then row) the list of input samples it covers and their
/// fractional weights, computed once and reused for every row (and every frame).
struct AreaFilter {
    struct Tap { var start: Int; var weights: [Float] }
    let srcWidth: Int, srcHeight: Int, dstWidth: Int, dstHeight: Int
    let xTaps: [Tap], yTaps: [Tap]

    init(srcWidth: Int, srcHeight: Int, dstWidth: Int, dstHeight: Int) {
        self.srcWidth = srcWidth
        self.srcHeight = srcHeight
        self.dstWidth = dstWidth
        self.dstHeight = dstHeight
        xTaps = AreaFilter.taps(src: srcWidth, dst: dstWidth)
        yTaps = AreaFilter.taps(src: srcHeight, dst: dstHeight)
    }

    static func taps(src: Int, dst: Int) -> [Tap] {
        let ratio = Double(src) / Double(dst)
        return (0..<dst).map { i in
            let lo = Double(i) * ratio, hi = min(Double(src), Double(i + 1) * ratio)
            let first = Int(lo.rounded(.down)), last = max(first, Int(hi.rounded(.up)) - 1)
            var weights: [Float] = []
            weights.reserveCapacity(last - first + 1)
            for s in first...min(last, src - 1) {
                let cover = min(hi, Double(s + 1)) - max(lo, Double(s))
                weights.append(Float(max(0, cover) / (hi - lo)))
            }
            return Tap(start: first, weights: weights)
        }
    }

    /// Filters one RGBA8 straight-alpha buffer of the source size into the destination size.
    func run(on src: [UInt8]) -> [UInt8] {
        guard src.count >= srcWidth * srcHeight * 4 else { return [UInt8](repeating: 0, count: dstWidth * dstHeight * 4) }
        // Horizontal pass into premultiplied floats, one source row at a time.
        var mid = [Float](repeating: 0, count: dstWidth * srcHeight * 4)
        src.withUnsafeBufferPointer { s in
            mid.withUnsafeMutableBufferPointer { m in
                for y in 0..<srcHeight {
                    let row = y * srcWidth * 4, out = y * dstWidth * 4
                    for (x, tap) in xTaps.enumerated() {
                        var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                        var p = row + tap.start * 4
                        for w in tap.weights {
                            let alpha = Float(s[p + 3]) * w
                            r += Float(s[p]) * alpha
                            g += Float(s[p + 1]) * alpha
                            b += Float(s[p + 2]) * alpha
                            a += alpha
                            p += 4
                        }
                        let o = out + x * 4
                        m[o] = r; m[o + 1] = g; m[o + 2] = b; m[o + 3] = a
                    }
                }
            }
        }
        // Vertical pass, then back to straight alpha.
        var dst = [UInt8](repeating: 0, count: dstWidth * dstHeight * 4)
        mid.withUnsafeBufferPointer { m in
            dst.withUnsafeMutableBufferPointer { d in
                var acc = [Float](repeating: 0, count: dstWidth * 4)
                for (y, tap) in yTaps.enumerated() {
                    for i in acc.indices { acc[i] = 0 }
                    for (k, w) in tap.weights.enumerated() {
                        let row = (tap.start + k) * dstWidth * 4
                        for i in 0..<(dstWidth * 4) { acc[i] += m[row + i] * w }
                    }
                    let out = y * dstWidth * 4
                    for x in 0..<dstWidth {
                        let a = acc[x * 4 + 3]
                        let o = out + x * 4
                        if a > 0 {
                            d[o] = clampByte(acc[x * 4] / a)
                            d[o + 1] = clampByte(acc[x * 4 + 1] / a)
                            d[o + 2] = clampByte(acc[x * 4 + 2] / a)
                        }
                        d[o + 3] = clampByte(a)
                    }
                }
            }
        }
        return dst
    }
}

@inline(__always) func clampByte(_ v: Float) -> UInt8 {
    UInt8(max(0, min(255, v.rounded())))
}

import Foundation

extension DecodedImage {
    /// The largest side a resize produces: guards against absurd targets (and their allocations).
    public static let maximumResizeDimension = 65_535

    /// The image resized into a `width`×`height` box (SDWebImage's `SDImageResizingTransformer`, Nuke's
    /// `ImageProcessors.Resize`).
    ///
    /// - `mode`: `.fit` keeps the whole image inside the box, `.fill` covers the box and crops the overflow
    ///   equally on both sides, `.exact` stretches to the box.
    /// - `allowsUpscaling`: when false (the default) `.fit` and `.fill` never enlarge; `.fill` then returns the
    ///   largest centred crop of the box's aspect ratio at its own resolution. `.exact` always reaches the box.
    /// - `filter`: see `ResamplingFilter`; the default `.lanczos3` was chosen by measurement (Docs/Processing.md).
    /// - `linearLight`: filter linear-light values (sRGB decoded first, encoded after) instead of the encoded
    ///   ones. Physically right for averaging light, but measured no closer to reference thumbnails than
    ///   gamma-space filtering after a JPEG's shrink-on-load (which averages encoded values anyway), so off
    ///   by default, as in libvips and Pillow.
    ///
    /// Filtering happens in premultiplied alpha; every animation frame is resized. An image already of the
    /// result size is returned unchanged.
    public func resized(toWidth boxWidth: Int, height boxHeight: Int, mode: ImageResizeMode = .fit,
                        filter: ResamplingFilter = .lanczos3, allowsUpscaling: Bool = false,
                        linearLight: Bool = false) throws(ImageProcessingError) -> DecodedImage {
        guard (1...Self.maximumResizeDimension).contains(boxWidth), (1...Self.maximumResizeDimension).contains(boxHeight) else {
            throw .invalidSize(width: boxWidth, height: boxHeight)
        }
        _ = try validatedBufferSize()
        let plan = ResizePlan(width: width, height: height, boxWidth: boxWidth, boxHeight: boxHeight,
                              mode: mode, allowsUpscaling: allowsUpscaling)
        return resampled(plan, filter: filter, linearLight: linearLight)
    }

    /// The image scaled to exactly `width`×`height` (aspect ratio not kept): `resized(toWidth:height:mode: .exact)`.
    public func resized(width: Int, height: Int, filter: ResamplingFilter = .lanczos3) throws(ImageProcessingError) -> DecodedImage {
        try resized(toWidth: width, height: height, mode: .exact, filter: filter)
    }

    /// Runs a resize plan; `linearLight` filters decoded sRGB (measured in Docs/Processing.md, not the default).
    func resampled(_ plan: ResizePlan, filter: ResamplingFilter, linearLight: Bool) -> DecodedImage {
        if plan.isIdentity { return self }
        if plan.isPlainCrop, let rect = plan.cropRect {
            return croppedUnchecked(rect)
        }
        var engine = SeparableFilter(
            srcWidth: width, srcHeight: height,
            xTaps: .resampling(filter: filter, inputCount: width, outputCount: plan.outputWidth,
                               offset: plan.source.x, span: plan.source.width),
            yTaps: .resampling(filter: filter, inputCount: height, outputCount: plan.outputHeight,
                               offset: plan.source.y, span: plan.source.height))
        engine.linearLight = linearLight
        let configured = engine
        return mappingFrames(width: plan.outputWidth, height: plan.outputHeight) { configured.run($0) }
    }
}

/// Where a resize reads from (a sub-pixel source rectangle) and what size it writes.
struct ResizePlan: Equatable {
    struct Source: Equatable { var x, y, width, height: Double }
    let source: Source
    let outputWidth: Int
    let outputHeight: Int
    private let imageWidth: Int
    private let imageHeight: Int

    init(width: Int, height: Int, boxWidth: Int, boxHeight: Int, mode: ImageResizeMode, allowsUpscaling: Bool) {
        imageWidth = width
        imageHeight = height
        let w = Double(width), h = Double(height), bw = Double(boxWidth), bh = Double(boxHeight)
        switch mode {
        case .exact:
            source = Source(x: 0, y: 0, width: w, height: h)
            outputWidth = boxWidth
            outputHeight = boxHeight
        case .fit:
            var s = min(bw / w, bh / h)
            if !allowsUpscaling { s = min(s, 1) }
            source = Source(x: 0, y: 0, width: w, height: h)
            outputWidth = Self.side(w * s, exact: bw, hit: s == bw / w)
            outputHeight = Self.side(h * s, exact: bh, hit: s == bh / h)
        case .fill:
            let cover = max(bw / w, bh / h)
            let s = allowsUpscaling ? cover : min(cover, 1)
            // The part of the image that ends up in the box, centred.
            let cw = min(w, bw / cover), ch = min(h, bh / cover)
            if s == 1 {
                // No scaling: a crop on whole pixels (copied, never resampled by a fraction of a pixel).
                let iw = min(width, max(1, Int(cw.rounded()))), ih = min(height, max(1, Int(ch.rounded())))
                source = Source(x: Double((width - iw) / 2), y: Double((height - ih) / 2), width: Double(iw), height: Double(ih))
                outputWidth = s == cover ? boxWidth : iw
                outputHeight = s == cover ? boxHeight : ih
            } else {
                source = Source(x: (w - cw) / 2, y: (h - ch) / 2, width: cw, height: ch)
                outputWidth = s == cover ? boxWidth : max(1, Int((cw * s).rounded()))
                outputHeight = s == cover ? boxHeight : max(1, Int((ch * s).rounded()))
            }
        }
    }

    /// A side computed from a scale: exactly the box side when that side decided the scale.
    private static func side(_ value: Double, exact: Double, hit: Bool) -> Int {
        max(1, hit ? Int(exact) : Int(value.rounded()))
    }

    /// Nothing to do: full source, same size.
    var isIdentity: Bool {
        source == Source(x: 0, y: 0, width: Double(imageWidth), height: Double(imageHeight))
            && outputWidth == imageWidth && outputHeight == imageHeight
    }

    /// A crop at scale 1 on whole pixels: copy rows instead of filtering.
    var isPlainCrop: Bool {
        source.width == Double(outputWidth) && source.height == Double(outputHeight)
            && source.x == source.x.rounded() && source.y == source.y.rounded()
    }

    var cropRect: PixelRect? {
        PixelRect(x: Int(source.x), y: Int(source.y), width: outputWidth, height: outputHeight)
            .clipped(width: imageWidth, height: imageHeight)
    }
}

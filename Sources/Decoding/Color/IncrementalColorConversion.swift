/// An incremental decoder that can say which rows of its latest partial image hold pixels, so its previews are
/// colour-converted row by row instead of whole (`IncrementalColorConversion`).
protocol PartialImageRows: AnyObject {
    /// For the latest `currentImage()`: rows `0..<settled` are final (the finished image has them unchanged),
    /// rows `settled..<content` hold pixels that may still change, rows from `content` on are all zero bytes.
    /// nil: unknown (every row is converted).
    var partialRows: (settled: Int, content: Int)? { get }
}

/// The colour conversion of one incremental decode's full-size partial images and of its final image.
///
/// A partial image shares the decoder's canvas, which the next bytes overwrite, so it cannot be converted in
/// place. This keeps a converted canvas of its own and converts into it only the rows that changed since the
/// last preview: for a sequential image (a baseline JPEG, a non-interlaced PNG) each row is converted once,
/// however many previews there are. The final image takes that canvas and converts only the rows not yet
/// final, so it is converted once overall and identical to a one-shot decode (the same transform, per pixel).
/// Decoders that convert rows themselves (the JPEG coder, `JPEGDecompressor.fuseColorConversion`) deliver
/// converted previews, which pass through untouched. Scaled and animated images are converted whole, after
/// scaling, as `ImageCodersManager.finish` does. Used on one thread at a time, as its decoder.
final class IncrementalColorConversion {
    private let options: ImageDecodingOptions
    private var canvas: [UInt8] = []
    private var width = 0
    private var height = 0
    /// Rows of `canvas` converted from final rows.
    private var settled = 0
    /// Rows of `canvas` that may hold pixels; the rest is zero.
    private var content = 0

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    /// `image` (a partial image, or the final one when `isFinal`) scaled and converted like a one-shot decode.
    func finish(_ image: consuming DecodedImage, rows: (settled: Int, content: Int)?, isFinal: Bool) -> DecodedImage {
        guard options.colorManagement == .convertToSRGB, image.frames.isEmpty, image.animation == nil,
              ImageScaler.targetSize(width: image.width, height: image.height, options: ImageScaler.finishing(options)) == nil,
              let key = ColorManagement.conversionKey(image) else {
            canvas = []
            return ImageCodersManager.finish(image, options: options)
        }
        let resolution = ColorManagement.transform(for: key)
        guard let source = resolution.convertsFrom else {
            var out = image
            out.scale = options.scaleFactor > 0 ? options.scaleFactor : 1
            ColorManagement.convert(&out, with: resolution)
            return out
        }
        if isFinal && canvas.isEmpty {
            return ImageCodersManager.finish(image, options: options)  // no previews: in place, as one-shot
        }
        let stride = image.width * 4
        var rows = rows ?? (0, image.height)
        if isFinal { rows = (image.height, image.height) }
        rows.settled = max(0, min(rows.settled, image.height))
        rows.content = max(rows.settled, min(rows.content, image.height))
        if image.width != width || image.height != height || rows.settled < settled || rows.content < content
            || image.pixels.count != stride * image.height {
            canvas = [UInt8](repeating: 0, count: image.pixels.count)
            (width, height, settled, content) = (image.width, image.height, 0, 0)
        }
        let first = settled, last = rows.content
        if first < last {
            image.pixels.withUnsafeBufferPointer { source in
                canvas.withUnsafeMutableBufferPointer { target in
                    guard let from = source.baseAddress, let to = target.baseAddress else { return }
                    (to + first * stride).update(from: from + first * stride, count: (last - first) * stride)
                    resolution.apply(to: to + first * stride, count: (last - first) * image.width)
                }
            }
        }
        (settled, content) = (rows.settled, rows.content)
        var out = image.replacingPixels(width: image.width, height: image.height, pixels: canvas, frames: [], animation: nil)
        out.scale = options.scaleFactor > 0 ? options.scaleFactor : 1
        out.colorState = .convertedToSRGB(from: source)
        out.iccProfile = nil
        out.colorSource = nil
        if isFinal { canvas = [] }
        return out
    }
}

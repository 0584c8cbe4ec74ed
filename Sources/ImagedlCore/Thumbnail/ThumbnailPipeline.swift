import Decoding
import Foundation

/// One image to one thumbnail: decode with shrink-on-load, orient, resize, encode. Stateless and Sendable:
/// every worker thread runs the same value.
///
/// The order keeps the expensive steps on the smallest image that still holds the detail the box needs:
/// 1. decode, letting the coder reduce cheaply to just above the box (JPEG: DCT scaling, or only the DC
///    coefficients at 1/8 — `ImageDecodingOptions.shrinkOnLoad`); the decoder also returns sRGB pixels
///    (embedded profiles applied, see Docs/Decoding.md), so colour needs no step of its own here;
/// 2. apply the EXIF orientation (cheap at this size);
/// 3. resize to the box with Lanczos-3 in premultiplied alpha (fit, or fill = cover + centre crop);
/// 4. encode without metadata (JPEG 4:2:0 at `quality`, PNG, or WebP).
struct ThumbnailPipeline: Sendable {
    let box: PixelSize
    let fill: Bool
    let encoding: ImageEncodingOptions
    var coders: ImageCodersManager = .shared

    init(options: ThumbnailOptions, coders: ImageCodersManager = .shared) {
        box = options.size
        fill = options.fill
        encoding = options.encoding
        self.coders = coders
    }

    struct Output {
        let image: DecodedImage
        let encoded: Data
    }

    func run(_ data: Data) throws -> Output {
        // The orientation is unknown until the header is read, so the shrink is bounded by a square of the
        // box's longer side: enough for either orientation (only very elongated boxes lose some shrink).
        let side = max(box.width, box.height)
        let decoding = ImageDecodingOptions(
            thumbnailPixelSize: CGSize(width: side, height: side), decodeFirstFrameOnly: true,
            shrinkOnLoad: fill ? .cover : .fit)
        var image = try coders.decode(data, options: decoding)
        image = try image.orientedUp()
        image = try image.resized(toWidth: box.width, height: box.height, mode: fill ? .fill : .fit)
        return Output(image: image, encoded: try coders.encode(image, options: encoding))
    }
}

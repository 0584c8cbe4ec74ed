import Decoding
import Foundation
import OperationDownloader

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
///
/// Data that ends before the image does fails as truncated (`ImageDownloaderError.badImageData(.truncated)`, what
/// a download of the same bytes reports) unless `allowsIncomplete` (`--allow-incomplete`): a thumbnail of half
/// an image is lost data, not a result.
struct ThumbnailPipeline: Sendable {
    let box: PixelSize
    let fill: Bool
    let encoding: ImageEncodingOptions
    let allowsIncomplete: Bool
    var coders: ImageCodersManager = .shared

    init(options: ThumbnailOptions, coders: ImageCodersManager = .shared) {
        box = options.size
        fill = options.fill
        encoding = options.encoding
        allowsIncomplete = options.network.allowIncomplete
        self.coders = coders
    }

    struct Output {
        let image: DecodedImage
        let encoded: Data
        /// The data ended early and the thumbnail shows the decoded part (only with `allowsIncomplete`).
        let isIncomplete: Bool
    }

    /// Throws `ImageDownloaderError` for data that is no usable image (the words `ErrorMessages` gives every
    /// command), `ImageProcessingError` or `ImageEncodingError` for the steps after the decode.
    func run(_ data: Data) throws -> Output {
        // The orientation is unknown until the header is read, so the shrink is bounded by a square of the
        // box's longer side: enough for either orientation (only very elongated boxes lose some shrink).
        let side = max(box.width, box.height)
        let decoding = ImageDecodingOptions(
            thumbnailPixelSize: CGSize(width: side, height: side), decodeFirstFrameOnly: true,
            shrinkOnLoad: fill ? .cover : .fit)
        var image: DecodedImage
        do {
            image = try coders.decode(data, options: decoding)
        } catch {
            throw ImageDownloaderError.forDecodingFailure(error, data: data, coders: coders)
        }
        let incomplete = image.isIncomplete
        if !allowsIncomplete, let truncated = ImageDownloaderError.forIncompleteImage(image, data: data) { throw truncated }
        image = try image.orientedUp()
        image = try image.resized(toWidth: box.width, height: box.height, mode: fill ? .fill : .fit)
        return Output(image: image, encoded: try coders.encode(image, options: encoding), isIncomplete: incomplete)
    }
}

import Foundation
import Decoding

/// What one caller wants made of the downloaded bytes: how to decode them and how to transform the result
/// (Docs/Options.md). Callers of one URL share one transfer; each distinct variant is decoded (and transformed) once
/// and shared by the callers that want it; each has its own memory-cache entry.
struct ImageVariant: Hashable, Sendable {
    /// The decoding settings of a variant: callers with equal ones share one decode (and, with
    /// `.progressiveLoad`, one incremental decoder).
    struct Decoding: Hashable, Sendable {
        /// The scale written into the image; nil: from the URL ("@2x").
        var scaleFactor: Double?
        /// Fit inside this many pixels (0 × 0: full size).
        var thumbnailWidth: Double = 0
        var thumbnailHeight: Double = 0
        var scalesDownLargeImages = false
        var firstFrameOnly = false
        /// `.preloadAllFrames`: every frame composited up front into `frames`.
        var preloadsAllFrames = false
        /// The decompression-bomb guard; nil: the operation's (the configuration's).
        var maximumPixelCount: Int?

        /// Nothing but defaults that change the output (the pixel limit does not).
        var isPlain: Bool {
            scaleFactor == nil && thumbnailWidth == 0 && !scalesDownLargeImages && !firstFrameOnly && !preloadsAllFrames
        }

        /// The decoder's options for a download of `url`; `cancellation` ends a wait for the decode memory budget.
        func options(url: URL?, defaultMaximumPixelCount: Int?, cancellation: ImageDecodingCancellation? = nil) -> ImageDecodingOptions {
            let thumbnail = thumbnailWidth > 0 && thumbnailHeight > 0
                ? CGSize(width: thumbnailWidth, height: thumbnailHeight) : nil
            return ImageDecodingOptions(
                scaleFactor: scaleFactor ?? imageScaleFactor(forKey: url?.absoluteString ?? ""),
                thumbnailPixelSize: thumbnail,
                scaleDownLimitBytes: scalesDownLargeImages ? ImageDecodingOptions.defaultScaleDownLimitBytes : nil,
                decodeFirstFrameOnly: firstFrameOnly,
                maximumPixelCount: maximumPixelCount ?? defaultMaximumPixelCount ?? ImageDecodingOptions.defaultMaximumPixelCount,
                preloadAllFrames: preloadsAllFrames, cancellation: cancellation)
        }
    }

    /// How to decode; nil for `.avoidDecodeImage` (the caller wants the data only).
    var decoding: Decoding?
    /// `ImageTransformer.key` of the caller's transformer, if any.
    var transformerKey: String?
    /// The memory-cache part of the variant: "" for a plain decode (see `cacheKey`).
    let cacheKey: String

    /// The variant of a caller with `options` and `context` (the caller's own, before any merge). Borrowed:
    /// copying a context retains every one of its fields.
    init(options: ImageDownloaderOptions, context: borrowing ImageDownloaderContext) {
        var decoding = Decoding()
        decoding.scaleFactor = context.imageScaleFactor
        if let size = context.thumbnailPixelSize, size.width > 0, size.height > 0 {
            decoding.thumbnailWidth = Double(size.width)
            decoding.thumbnailHeight = Double(size.height)
        }
        decoding.scalesDownLargeImages = options.contains(.scaleDownLargeImages)
        decoding.firstFrameOnly = options.contains(.decodeFirstFrameOnly)
        decoding.preloadsAllFrames = options.contains(.preloadAllFrames) && !decoding.firstFrameOnly
        decoding.maximumPixelCount = context.maximumPixelCount
        self.decoding = options.contains(.avoidDecodeImage) ? nil : decoding
        self.transformerKey = context.transformer?.key
        self.cacheKey = transformerKey == nil && decoding.isPlain ? "" : Self.cacheKey(decoding, transformerKey: transformerKey)
    }

    /// The settings that change the output, in a fixed order, each field ended by ";", the transformer key
    /// last (so any key text is unambiguous): "" when nothing differs from a plain decode. The pixel limit is
    /// not part of it (it decides whether a decode fails, not what it produces); `.avoidDecodeImage` is not
    /// either (such a caller is answered with the image a decoding caller would have cached).
    private static func cacheKey(_ decoding: Decoding, transformerKey: String?) -> String {
        var key = ""
        if let scale = decoding.scaleFactor { key += "scale=\(scale);" }
        if decoding.thumbnailWidth > 0 { key += "thumbnail=\(decoding.thumbnailWidth)x\(decoding.thumbnailHeight);" }
        if decoding.scalesDownLargeImages { key += "scaleDown;" }
        if decoding.firstFrameOnly { key += "firstFrame;" }
        if decoding.preloadsAllFrames { key += "allFrames;" }
        if let transformerKey { key += "transformer=" + transformerKey }
        return key
    }

    /// The additional identifier given to `ImageRequestCache` for a caller's `cacheIdentifier` and this
    /// variant: the cache identifier alone for a plain decode (as before variants existed), else the cache
    /// identifier and the variant key joined by U+001E. "%" and U+001E inside the cache identifier are
    /// percent-escaped first, so no two (identifier, variant) pairs give the same string.
    func additionalIdentifier(cacheIdentifier: String?) -> String? {
        var identifier = cacheIdentifier ?? ""
        // Scanned as bytes: `String.contains` goes through Foundation's string search on Linux.
        if identifier.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == 0x1E }) {
            identifier = identifier.replacingOccurrences(of: "%", with: "%25")
                .replacingOccurrences(of: "\u{1E}", with: "%1E")
        }
        if cacheKey.isEmpty { return identifier.isEmpty ? nil : identifier }
        return identifier + "\u{1E}" + cacheKey
    }
}

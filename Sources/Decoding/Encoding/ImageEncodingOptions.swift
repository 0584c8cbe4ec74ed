import Foundation

/// How `ImageCodersManager.encode(_:options:)` writes an image: format, quality and the format's own knobs.
///
/// Output carries no metadata: no EXIF, XMP, ICC profile or comments are written (pixels are sRGB). By
/// default the EXIF orientation is applied to the pixels first, so the file needs no orientation tag.
/// Formats without alpha (JPEG) composite transparent pixels over `background`. Animated images are written
/// as their first frame.
public struct ImageEncodingOptions: Sendable, Equatable {
    /// The container to write: `.jpeg`, `.png`, `.webp` or `.avif` with the built-in coders.
    public var format: ImageFormat
    /// 0...1 for lossy formats (JPEG, lossy WebP, AVIF): libjpeg/libwebp/libavif quality 1...100 after × 100.
    public var quality: Double
    /// JPEG: write a progressive file (libjpeg's standard scan script, Huffman tables optimised).
    public var progressive: Bool
    /// JPEG: chroma resolution.
    public var chromaSubsampling: ChromaSubsampling
    /// JPEG: optimised Huffman tables for a baseline file (a few % smaller, a little more CPU).
    public var optimizeCoding: Bool
    /// PNG: zlib level 0 (store) ... 9 (smallest); 6 is libpng's default.
    public var compressionLevel: Int
    /// WebP: lossless instead of lossy (`quality` is then ignored).
    public var lossless: Bool
    /// Apply the EXIF orientation to the pixels (true, the default) rather than writing an orientation tag
    /// (false: JPEG gets a minimal EXIF block holding only the orientation; other formats drop it).
    public var normalizesOrientation: Bool
    /// The colour (red, green, blue) transparent pixels are composited over in formats without alpha.
    public var background: SIMD3<UInt8>

    /// JPEG chroma subsampling: how many luma samples share one chroma sample.
    public enum ChromaSubsampling: String, Sendable, Equatable, CaseIterable {
        /// 2×2: libjpeg's, Pillow's and libvips' default; smallest files.
        case yuv420 = "4:2:0"
        /// 2×1.
        case yuv422 = "4:2:2"
        /// None: full-resolution colour (sharper red/blue edges, larger files).
        case yuv444 = "4:4:4"
    }

    public init(
        format: ImageFormat, quality: Double = 0.8, progressive: Bool = false,
        chromaSubsampling: ChromaSubsampling = .yuv420, optimizeCoding: Bool = false, compressionLevel: Int = 6,
        lossless: Bool = false, normalizesOrientation: Bool = true, background: SIMD3<UInt8> = SIMD3(255, 255, 255)
    ) {
        self.format = format
        self.quality = quality
        self.progressive = progressive
        self.chromaSubsampling = chromaSubsampling
        self.optimizeCoding = optimizeCoding
        self.compressionLevel = compressionLevel
        self.lossless = lossless
        self.normalizesOrientation = normalizesOrientation
        self.background = background
    }

    /// `quality` as libjpeg/libwebp's 1...100 (non-finite values mean the default 0.8).
    var qualityPercent: Int {
        Int(max(1, min(100, ((quality.isFinite ? quality : 0.8) * 100).rounded())))
    }

    /// The image an encoder writes: first frame only, orientation applied unless told otherwise, and for
    /// `flatten` (formats without alpha) composited over `background`.
    func prepared(_ image: DecodedImage, flatten: Bool) throws(ImageEncodingError) -> DecodedImage {
        var still = image
        do {
            _ = try image.validatedBufferSize()
        } catch {
            throw .invalidImage(image.width <= 0 || image.height <= 0
                ? "zero width or height" : "pixel buffer does not match \(image.width)x\(image.height) RGBA8")
        }
        if !image.frames.isEmpty {
            still = DecodedImage(width: image.width, height: image.height, pixels: image.pixels, format: image.format,
                                 scale: image.scale, orientation: image.orientation)
        }
        if normalizesOrientation { still = still.remapped(still.orientation) }
        if flatten { still = still.flattened(over: background) }
        return still
    }
}

/// Why an image could not be written.
public enum ImageEncodingError: Error, Sendable, Equatable {
    /// No registered coder writes this format.
    case unsupportedFormat(ImageFormat)
    /// The codec library is not installed; the message says which package to install.
    case libraryUnavailable(String)
    /// The image cannot be written as given (empty, too large for the format, inconsistent buffer).
    case invalidImage(String)
    /// An option is outside its range; the message names it.
    case invalidOption(String)
    /// The codec library reported an error.
    case failed(String)
}

extension ImageEncodingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unsupportedFormat(let format): return "no encoder for \(format.rawValue)"
        case .libraryUnavailable(let why): return why
        case .invalidImage(let why): return "cannot encode this image: \(why)"
        case .invalidOption(let why): return "invalid encoding option: \(why)"
        case .failed(let why): return "encoding failed: \(why)"
        }
    }
}

/// A coder that also encodes with `ImageEncodingOptions` (the built-in JPEG, PNG and WebP coders).
/// Coders that only implement `ImageCoder.encode(_:format:quality:)` still work with
/// `ImageCodersManager.encode(_:options:)`: they get the prepared image and the quality.
public protocol ConfigurableImageEncoder: ImageCoder {
    /// Encodes `image` as `options.format`, applying every option the format supports.
    func encode(_ image: DecodedImage, options: ImageEncodingOptions) throws -> Data
}

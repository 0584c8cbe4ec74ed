import Decoding
import Foundation

/// Options of `imagedl thumbnail FILE|URL... --size WxH --output DIR`.
public struct ThumbnailOptions: Equatable, Sendable {
    /// Output formats `--format` accepts.
    public enum Format: String, Equatable, Sendable, CaseIterable {
        case jpeg, png, webp, avif

        var imageFormat: ImageFormat {
            switch self {
            case .jpeg: return .jpeg
            case .png: return .png
            case .webp: return .webp
            case .avif: return .avif
            }
        }

        var fileExtension: String { self == .jpeg ? "jpg" : rawValue }
    }

    /// Files and http(s) URLs, in command-line order (then `--input` lines).
    public var inputs: [String] = []
    /// The box every thumbnail fits in (`--size WxH`; `--size N` means N×N).
    public var size = PixelSize(width: 256, height: 256)
    /// Fill the box exactly, cropping the overflow (`--fill`), instead of fitting inside it.
    public var fill = false
    /// Output format (`--format`, default JPEG).
    public var format = Format.jpeg
    /// 1...100 for JPEG, lossy WebP and AVIF (`--quality`, default 80); `--quality 100` with WebP is lossless.
    public var quality = 80
    /// Where thumbnails are written (`--output DIR`, created if needed).
    public var outputDirectory = ""
    /// One JSON object per input on stdout (`--json`).
    public var json = false
    /// Images processed at once (`--concurrency`, default: every core).
    public var concurrency = ProcessInfo.processInfo.activeProcessorCount
    /// How URLs are fetched: the download options (`--timeout`, `--header`, `--http-cache`, ... as for
    /// `imagedl URL...`); its `urls` stay empty.
    public var network = DownloadOptions()

    public init() {}

    /// What the encoder is asked for: metadata stripped, orientation already applied, JPEG 4:2:0.
    var encoding: ImageEncodingOptions {
        ImageEncodingOptions(format: format.imageFormat, quality: Double(quality) / 100,
                             lossless: format == .webp && quality == 100)
    }
}

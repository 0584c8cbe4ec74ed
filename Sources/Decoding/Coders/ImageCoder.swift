import Foundation

/// Turns bytes of one or more formats into a `DecodedImage`, and optionally back.
///
/// Coders are registered with `ImageCodersManager`; a coder added later is asked first.
/// `decode` must never trap on any input: it throws `ImageDecodingError` instead.
public protocol ImageCoder: Sendable {
    /// Whether this coder recognises `data` (usually by sniffing its first bytes).
    func canDecode(_ data: Data) -> Bool
    /// Decodes every byte of `data` in one go.
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage
    /// Whether `encode` can write `format`.
    func canEncode(_ format: ImageFormat) -> Bool
    /// Encodes `image` as `format`; `quality` is 0...1 for lossy formats.
    func encode(_ image: DecodedImage, format: ImageFormat, quality: Double) throws -> Data
}

extension ImageCoder {
    public func canEncode(_ format: ImageFormat) -> Bool { false }
    public func encode(_ image: DecodedImage, format: ImageFormat, quality: Double) throws -> Data {
        throw ImageDecodingError.unsupportedFormat
    }
}

/// A coder that can also decode while bytes are still arriving.
public protocol ProgressiveImageCoder: ImageCoder {
    /// Whether an incremental decoder can start from this prefix of the data.
    func canIncrementallyDecode(_ data: Data) -> Bool
    /// A fresh decoder; feed it every byte with `append`.
    func makeIncrementalDecoder(options: ImageDecodingOptions) -> any IncrementalImageDecoder
}

/// Decodes one image from bytes delivered in pieces.
///
/// `append` takes only the NEW bytes (deltas) and never re-decodes from byte 0. Partial images
/// (`isIncomplete == true`) may be available before the end; after `append(_:isFinal: true)`,
/// `currentImage()` is the complete image, pixel-identical to a one-shot `decode` of the same bytes,
/// and `append` throws exactly when that `decode` would throw. After a throw the decoder stays failed.
/// Not thread-safe: use one decoder from one queue at a time.
public protocol IncrementalImageDecoder: AnyObject {
    /// Feeds the next bytes; `isFinal` says no more will come.
    func append(_ data: Data, isFinal: Bool) throws
    /// The best image so far: a partial one while incomplete, `nil` before anything can be shown.
    func currentImage() -> DecodedImage?
}

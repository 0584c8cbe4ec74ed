import Foundation

/// The registry of coders, and the one entry point for decoding.
///
/// Built-in coders cover JPEG, PNG, GIF, BMP, ICO and (when the system library is present) WebP, HEIC/AVIF
/// and TIFF. A coder added with `addCoder` is consulted before every coder added earlier, so users can
/// override a built-in one; `removeCoder` takes built-ins out too.
public final class ImageCodersManager: @unchecked Sendable {  // `lock` guards `storage`
    /// The manager every downloader uses unless told otherwise.
    public static let shared = ImageCodersManager()

    private let lock = NSLock()
    private var storage: [any ImageCoder]

    /// A manager with the built-in coders, or exactly `coders` (the last one is asked first).
    public init(coders: [any ImageCoder]? = nil) {
        storage = coders ?? BuiltInCoders.all()
    }

    /// The registered coders, in the order they were added (the last is consulted first).
    public var coders: [any ImageCoder] {
        lock.withLock { storage }
    }

    /// Registers `coder` ahead of all the others.
    public func addCoder(_ coder: any ImageCoder) {
        lock.withLock { storage.append(coder) }
    }

    /// Removes every registered coder of the same type as `coder`.
    public func removeCoder(_ coder: any ImageCoder) {
        let type = ObjectIdentifier(Swift.type(of: coder))
        lock.withLock { storage.removeAll { ObjectIdentifier(Swift.type(of: $0)) == type } }
    }

    /// Decodes `data` with the newest coder that recognises it, then applies the options' scaling and scale factor.
    public func decode(_ data: Data, options: ImageDecodingOptions = ImageDecodingOptions()) throws -> DecodedImage {
        guard let coder = coders.reversed().first(where: { $0.canDecode(data) }) else {
            throw ImageDecodingError.unsupportedFormat
        }
        return try DecodeActivity.shared.during {
            Self.finish(try coder.decode(data, options: options.lettingCoderConvertColor), options: options)
        }
    }

    /// An incremental decoder for data that starts with `data` (only a prefix is looked at; the caller
    /// then appends every byte, that prefix included), or `nil` when no coder recognises the prefix yet.
    /// Coders without incremental support get a decoder that buffers and decodes once at the end.
    public func incrementalDecoder(for data: Data, options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        for coder in coders.reversed() {
            if let progressive = coder as? any ProgressiveImageCoder, progressive.canIncrementallyDecode(data) {
                return FinishingIncrementalDecoder(
                    progressive.makeIncrementalDecoder(options: options.lettingCoderConvertColor), options: options)
            }
            if coder.canDecode(data) {
                return BufferingIncrementalDecoder(coder: coder, options: options)
            }
        }
        return nil
    }

    /// Which encoder, if any, writes `format`.
    public func encode(_ image: DecodedImage, format: ImageFormat, quality: Double = 0.9) throws -> Data {
        guard let coder = coders.reversed().first(where: { $0.canEncode(format) }) else {
            throw ImageDecodingError.unsupportedFormat
        }
        return try coder.encode(image, format: format, quality: quality)
    }

    /// The post-processing every decode path shares: exact target size, the scale factor, then colour
    /// management (after scaling, so a thumbnail converts only its own pixels; in place, since `image` is
    /// consumed and its pixels are not shared).
    static func finish(_ image: consuming DecodedImage, options: ImageDecodingOptions) -> DecodedImage {
        var out = ImageScaler.apply(options, to: consume image)
        out.scale = options.scaleFactor > 0 ? options.scaleFactor : 1
        ColorManagement.apply(options.colorManagement, to: &out)
        return out
    }
}

/// Applies the manager's post-processing to whatever a coder's incremental decoder produces, so the final
/// image equals `ImageCodersManager.decode` of the same bytes. Partial images are colour-converted only in the
/// rows that changed (`ProgressiveColorConversion`).
final class FinishingIncrementalDecoder: IncrementalImageDecoder {
    private let base: any IncrementalImageDecoder
    private let colorConversion: ProgressiveColorConversion
    /// The finished final image: scaled and converted once, however often it is asked for.
    private var finalImage: DecodedImage?
    private var isFinal = false

    init(_ base: any IncrementalImageDecoder, options: ImageDecodingOptions) {
        self.base = base
        colorConversion = ProgressiveColorConversion(options: options)
    }

    func append(_ data: Data, isFinal: Bool) throws {
        try base.append(data, isFinal: isFinal)
        if isFinal { self.isFinal = true }
    }

    func currentImage() -> DecodedImage? {
        if let finalImage { return finalImage }
        guard let partial = base.currentImage() else { return nil }
        let rows = (base as? any PartialImageRows)?.partialRows
        let image = colorConversion.finish(partial, rows: rows, isFinal: isFinal)
        if isFinal { finalImage = image }
        return image
    }
}

/// For coders that cannot decode in pieces: keeps the bytes and decodes once, when the last ones arrive.
final class BufferingIncrementalDecoder: IncrementalImageDecoder {
    private let coder: any ImageCoder
    private let options: ImageDecodingOptions
    private var buffer = Data()
    private var image: DecodedImage?
    private var failure: (any Error)?

    init(coder: any ImageCoder, options: ImageDecodingOptions) {
        self.coder = coder
        self.options = options
    }

    func append(_ data: Data, isFinal: Bool) throws {
        if let failure { throw failure }
        buffer.append(data)
        guard isFinal else { return }
        do {
            image = ImageCodersManager.finish(try coder.decode(buffer, options: options), options: options)
            buffer = Data()
        } catch {
            failure = error
            throw error
        }
    }

    func currentImage() -> DecodedImage? { image }
}

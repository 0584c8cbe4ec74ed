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
    ///
    /// The decode's pixel memory is reserved against `options.decodingBudget` from the header on (waiting
    /// for room when the budget is taken) and released when this returns. An animation comes back with its
    /// first frame in `pixels` and the others composited on demand by `animation`, or every frame in `frames`
    /// with `preloadAllFrames` (when they fit in the budget).
    public func decode(_ data: Data, options: ImageDecodingOptions = ImageDecodingOptions()) throws -> DecodedImage {
        guard let coder = coders.reversed().first(where: { $0.canDecode(data) }) else {
            throw ImageDecodingError.unsupportedFormat
        }
        let scope = DecodeBudgetScope(budget: options.decodingBudget, format: ImageFormat(sniffing: data),
                                      cancellation: options.cancellation)
        var scoped = options.lettingCoderConvertColor
        scoped.budgetScope = DecodeBudgetScopeSlot(scope: scope)
        let image: DecodedImage
        do {
            defer { scope.release() }
            image = try DecodeActivity.shared.during {
                Self.finish(try coder.decode(data, options: scoped), options: options)
            }
        }
        return try Self.preloadingFrames(image, options: options)
    }

    /// An incremental decoder for data that starts with `data` (only a prefix is looked at; the caller
    /// then appends every byte, that prefix included), or `nil` when no coder recognises the prefix yet.
    /// Coders without incremental support get a decoder that buffers and decodes once at the end.
    ///
    /// The decoder reserves its pixel memory against `options.decodingBudget` at the header and holds it until
    /// its final image exists. Only the final append waits for room: an earlier one that would have to wait
    /// throws `.decodingBudgetBusy`, and the caller decodes the complete data instead (the downloader does).
    public func incrementalDecoder(for data: Data, options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        for coder in coders.reversed() {
            if let progressive = coder as? any ProgressiveImageCoder, progressive.canIncrementallyDecode(data) {
                let scope = DecodeBudgetScope(budget: options.decodingBudget, format: ImageFormat(sniffing: data),
                                              cancellation: options.cancellation)
                var scoped = options.lettingCoderConvertColor
                scoped.budgetScope = DecodeBudgetScopeSlot(scope: scope)
                return FinishingIncrementalDecoder(progressive.makeIncrementalDecoder(options: scoped), options: options, scope: scope)
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
    /// consumed and its pixels are not shared). An animation gets the same steps for the frames it composites
    /// later.
    static func finish(_ image: consuming DecodedImage, options: ImageDecodingOptions) -> DecodedImage {
        var out = ImageScaler.apply(options, to: consume image)
        out.scale = options.scaleFactor > 0 ? options.scaleFactor : 1
        ColorManagement.apply(options.colorManagement, to: &out)
        return out
    }

    /// `.preloadAllFrames`: every frame composited into `frames` while holding the budget for all of them;
    /// left on demand when they would not fit in the whole budget, when the image is incomplete, or when a
    /// frame does not decode (`animation.frame(at:)` then reports that frame's error).
    static func preloadingFrames(_ image: DecodedImage, options: ImageDecodingOptions) throws -> DecodedImage {
        guard options.preloadAllFrames, image.frames.isEmpty, !image.isIncomplete, let animation = image.animation else {
            return image
        }
        let frameBytes = image.width * image.height * 4
        let (total, overflow) = frameBytes.multipliedReportingOverflow(by: animation.frameCount)
        let needed = overflow ? Int.max : total &+ animation.workingBytes
        guard needed <= options.decodingBudget.limitBytes else { return image }
        let reservation = try options.decodingBudget.reserve(needed, cancellation: options.cancellation)
        defer { reservation.release() }
        var out = image
        out.frames = (try? animation.allFrames()) ?? []
        return out
    }
}

/// Applies the manager's post-processing to whatever a coder's incremental decoder produces, so the final
/// image equals `ImageCodersManager.decode` of the same bytes. Partial images are colour-converted only in the
/// rows that changed (`IncrementalColorConversion`).
final class FinishingIncrementalDecoder: IncrementalImageDecoder {
    private let base: any IncrementalImageDecoder
    private let options: ImageDecodingOptions
    /// The decoder's claim on the decode memory budget, released once the final image exists.
    private let scope: DecodeBudgetScope?
    private let colorConversion: IncrementalColorConversion
    /// The finished final image: scaled and converted once, however often it is asked for.
    private var finalImage: DecodedImage?
    private var isFinal = false

    init(_ base: any IncrementalImageDecoder, options: ImageDecodingOptions, scope: DecodeBudgetScope? = nil) {
        self.base = base
        self.options = options
        self.scope = scope
        colorConversion = IncrementalColorConversion(options: options)
    }

    func append(_ data: Data, isFinal: Bool) throws {
        scope?.mayWait = isFinal
        do {
            try base.append(data, isFinal: isFinal)
        } catch {
            scope?.release()
            throw error
        }
        if isFinal { self.isFinal = true }
    }

    func currentImage() -> DecodedImage? {
        if let finalImage { return finalImage }
        guard let partial = base.currentImage() else { return nil }
        let rows = (base as? any PartialImageRows)?.partialRows
        var image = colorConversion.finish(partial, rows: rows, isFinal: isFinal)
        if isFinal {
            // Released before preloading, which reserves on its own: a decode never waits while it holds.
            scope?.release()
            image = (try? ImageCodersManager.preloadingFrames(image, options: options)) ?? image
            finalImage = image
        }
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

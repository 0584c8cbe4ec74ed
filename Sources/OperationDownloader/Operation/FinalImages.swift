import Foundation
import Decoding

/// The final decode step of one download: the body (decrypted) decoded once per distinct
/// `ImageVariant.Decoding` and transformed once per distinct variant, lazily, so that callers who join late
/// still get theirs; then each caller's answer (Docs/Options.md).
///
/// Results are computed on first request and kept until the operation answers its callers: a caller never
/// waits for a variant nobody asked for. Progressive downloads hand in the images their incremental decoders
/// finished, so those variants are not decoded again.
final class FinalImages: @unchecked Sendable {  // `results` is lock-guarded (`Locked`); decoding runs outside it on one queue at a time
    typealias Outcome = Result<DecodedImage, any Error>

    let data: Data
    private let url: URL?
    private let manager: ImageCodersManager
    /// The operation's pixel limit, for variants that set none.
    private let maximumPixelCount: Int?
    /// Cancelled with the operation: ends a decode's wait for the decode memory budget.
    private let cancellation: ImageDecodingCancellation?
    /// Told the bytes of each image before it is decoded (the memory cache makes room for it).
    private let makeRoom: (@Sendable (Int) -> Void)?
    /// Times each decode (nil without telemetry).
    private let observation: DownloadObservation?
    /// What the decodes reserve their pixel memory against (the downloader's: the process's budget).
    private let decodingBudget: ImageDecodingBudget
    private struct Results {
        var decoded: [ImageVariant.Decoding: Outcome]
        var transformed: [ImageVariant: Outcome] = [:]
    }
    private let results: Locked<Results>

    init(
        data: Data, url: URL?, manager: ImageCodersManager, maximumPixelCount: Int?,
        finishedIncrementally: [ImageVariant.Decoding: Outcome] = [:], cancellation: ImageDecodingCancellation? = nil,
        makeRoom: (@Sendable (Int) -> Void)? = nil, observation: DownloadObservation? = nil,
        decodingBudget: ImageDecodingBudget = .shared
    ) {
        self.observation = observation
        self.decodingBudget = decodingBudget
        self.cancellation = cancellation
        self.makeRoom = makeRoom
        self.data = data
        self.url = url
        self.manager = manager
        self.maximumPixelCount = maximumPixelCount
        self.results = Locked(Results(decoded: finishedIncrementally))
    }

    /// Computes what `records` will be answered with (before the store closes, so the answers can go out at once).
    func prepare(_ records: [CallbackRecord]) {
        for record in records { _ = answer(for: record) }
    }

    /// The caller's answer: its variant's image (or the data only), or the error that fails it alone.
    func answer(for record: CallbackRecord) -> (image: DecodedImage?, error: (any Error)?) {
        guard let decoding = record.variant.decoding else { return (nil, nil) }
        let image: DecodedImage
        switch decode(decoding) {
        case .failure(let error): return (nil, error)
        case .success(let value): image = value
        }
        if !record.allowsIncompleteImages, let truncated = ImageDownloaderError.forIncompleteImage(image, data: data) {
            return (nil, truncated)
        }
        switch transform(image, variant: record.variant, with: record.transformer) {
        case .failure(let error):
            // The error the transformer threw stays inside the reason, with the transformer's key.
            return (nil, ImageDownloaderError.badImageData(.transformerFailed(key: record.transformer?.key ?? "", error: error)))
        case .success(var output):
            output.isIncomplete = image.isIncomplete
            return (output, nil)
        }
    }

    private func decode(_ decoding: ImageVariant.Decoding) -> Outcome {
        if let known = results.withLock({ $0.decoded[decoding] }) { return known }
        var options = decoding.options(url: url, defaultMaximumPixelCount: maximumPixelCount, cancellation: cancellation)
        options.willAllocateImage = DecodeAllocationHook(makeRoom)
        options.decodingBudget = decodingBudget
        let timing = observation?.decodeBegins()
        if let timing, let observation { options.budgetWaited = observation.budgetWaitHook(for: timing) }
        let outcome: Outcome
        do {
            var image = try manager.decode(data, options: options)
            image.scale = options.scaleFactor
            if let timing { observation?.decodeEnded(timing, format: image.format, error: nil, budget: decodingBudget) }
            outcome = image.width > 0 && image.height > 0 && !image.pixels.isEmpty
                ? .success(image) : .failure(ImageDownloaderError.badImageData(.zeroPixels))
        } catch {
            if let timing { observation?.decodeEnded(timing, format: ImageFormat(sniffing: data), error: error, budget: decodingBudget) }
            outcome = .failure(Self.downloaderError(forDecoding: error, data: data, coders: manager.coders))
        }
        results.withLock { $0.decoded[decoding] = outcome }
        return outcome
    }

    private func transform(_ image: DecodedImage, variant: ImageVariant, with transformer: (any ImageTransformer)?) -> Outcome {
        guard let transformer else { return .success(image) }
        if let known = results.withLock({ $0.transformed[variant] }) { return known }
        let outcome = Result { try transformer.transform(image) }
        results.withLock { $0.transformed[variant] = outcome }
        return outcome
    }

    /// An incremental decoder's final outcome, checked like a one-shot decode (zero pixels, typed errors).
    static func checked(_ outcome: Outcome, data: Data, scale: Double, coders: @autoclosure () -> [any ImageCoder]) -> Outcome {
        switch outcome {
        case .success(var image):
            guard image.width > 0, image.height > 0, !image.pixels.isEmpty else {
                return .failure(ImageDownloaderError.badImageData(.zeroPixels))
            }
            image.scale = scale
            return .success(image)
        case .failure(let error):
            return .failure(downloaderError(forDecoding: error, data: data, coders: coders()))
        }
    }

    /// The error a caller gets when the decoder threw: `.badImageData` with the decoder's typed cause, except
    /// for data no coder knows: a missing codec library is `.unsupportedOnPlatform` naming what to install,
    /// and data that is no image at all is `.notAnImage` saying what it looks like.
    static func downloaderError(forDecoding error: any Error, data: Data, coders: [any ImageCoder]) -> ImageDownloaderError {
        if let already = error as? ImageDownloaderError { return already }
        guard let decodingError = error as? ImageDecodingError, decodingError == .unsupportedFormat else {
            return .badImageData(.decoderThrew(error, receivedBytes: data.count))
        }
        let format = ImageFormat(sniffing: data)
        if format == .undefined {
            let what = BodySniffer.describeNonImage(data)
                ?? "unknown binary data (it starts with \(BodySniffer.hexPrefix(data)))"
            return .badImageData(.notAnImage(what))
        }
        if let missing = MissingCodecLibrary.reason(for: format, coders: coders) { return .unsupportedOnPlatform(missing) }
        return .badImageData(.decoding(decodingError))
    }
}

/// The system libraries behind the optional coders, and how to install them (Debian names).
enum MissingCodecLibrary {
    /// Why `format` cannot be decoded here when its coder is registered but its library is missing, or nil.
    static func reason(for format: ImageFormat, coders: [any ImageCoder]) -> String? {
        switch format {
        case .webp:
            return coders.lazy.compactMap { ($0 as? WebPCoder)?.unavailableReason }.first
                .map { "WebP needs libwebp (\($0)): apt-get install libwebp7" }
        case .heic, .heif, .avif:
            return coders.lazy.compactMap { ($0 as? HEIFCoder)?.unavailableReason }.first
                .map { "HEIF and AVIF need libheif (\($0)): apt-get install libheif1" }
        case .tiff:
            return coders.lazy.compactMap { ($0 as? TIFFCoder)?.unavailableReason }.first
                .map { "TIFF needs libtiff (\($0)): apt-get install libtiff6" }
        default:
            return nil
        }
    }
}

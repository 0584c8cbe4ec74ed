import CImageCodecs
import Foundation

/// Decodes a JPEG while its bytes arrive, over a suspending libjpeg source: each `append` copies only the
/// new bytes behind the unconsumed ones and continues where libjpeg stopped; nothing is decoded twice.
///
/// - Baseline (single-scan): rows are decoded as data arrives; a partial image has the rows so far and
///   fully transparent rows below.
/// - Progressive (multi-scan): scans are absorbed in buffered-image mode; `currentImage()` renders an
///   output pass only when a scan completed since the last one and the data grew by half since the last
///   rendered pass (a pass renders, and colour-converts, the whole frame; a small scan changes it little), so
///   a caller asking after every chunk gets a handful of passes, not one per scan.
/// - Arithmetic-coded: libjpeg cannot suspend inside those scans, so the bytes are buffered until
///   `isFinal` and decoded in one go.
/// - Lossless (SOF3) that the linked libjpeg refuses: the bytes are buffered (those before the frame header are
///   kept until libjpeg has read it) and decoded at the end by `LosslessJPEGDecoder`, as `JPEGCoder.decode` does.
///
/// After `append(_:isFinal: true)` the image equals `JPEGCoder.decode` of the same bytes, truncated
/// files included (same libjpeg state, same gray fill).
final class JPEGIncrementalDecoder: IncrementalImageDecoder {
    private let options: ImageDecodingOptions
    private var jpeg: JPEGDecompressor?
    private var header: JPEGDecompressor.Header?
    private var width = 0
    private var height = 0
    private var started = false
    /// The output buffer libjpeg writes into; zero (transparent) where nothing was decoded yet.
    private var pixels: [UInt8] = []
    private var finalImage: DecodedImage?
    private var failure: (any Error)?
    /// Bytes appended so far, and how many there were when the last preview pass was rendered (0: none yet).
    private var bytesAppended = 0
    private var bytesAtLastPass = 0
    /// Every byte until libjpeg has read the frame header (nil after): a lossless file libjpeg refuses starts over
    /// from them in Swift.
    private var headerBytes: Data? = Data()
    /// A lossless file decoded in Swift at the end: every byte so far.
    private var losslessBytes: Data?

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    func append(_ data: Data, isFinal: Bool) throws {
        if let failure { throw failure }
        // Finished early (EOI, or every row decoded): later bytes are ignored, as a one-shot decode ignores them.
        guard finalImage == nil else { return }
        do {
            if losslessBytes != nil {
                losslessBytes?.append(data)
                if isFinal, let bytes = losslessBytes { try finishLossless(bytes) }
                return
            }
            headerBytes?.append(data)
            let jpeg = try self.jpeg ?? JPEGDecompressor(maximumPixelCount: options.maximumPixelCount)
            self.jpeg = jpeg
            try data.withUnsafeBytes { try jpeg.append($0) }
            bytesAppended += data.count
            if isFinal { jpeg.setFinal() }
            do {
                try advance(jpeg, isFinal: isFinal)
            } catch is LosslessJPEGRefused {
                losslessBytes = headerBytes
                headerBytes = nil
                self.jpeg = nil
                if isFinal, let bytes = losslessBytes { try finishLossless(bytes) }
            }
        } catch {
            fail(error)
            throw error
        }
    }

    func currentImage() -> DecodedImage? {
        if let finalImage { return finalImage }
        guard failure == nil, started, let jpeg, let header else { return nil }
        if header.isMultiScan {
            do {
                if bytesAtLastPass == 0 || bytesAppended >= bytesAtLastPass + bytesAtLastPass / 2 {
                    let rendered = try pixels.withUnsafeMutableBufferPointer { buffer -> Bool in
                        guard let base = buffer.baseAddress else { return false }
                        return try jpeg.renderPreview(into: base)
                    }
                    if rendered { bytesAtLastPass = bytesAppended }
                }
            } catch {
                fail(error)  // libjpeg's state is gone after an error; the next append reports it
                return nil
            }
            guard jpeg.progress.rendered_scan > 0 else { return nil }
        } else {
            guard jpeg.progress.rows_decoded > 0 else { return nil }
        }
        // Shares the buffer (copy on write): free unless the caller still holds it when libjpeg writes again.
        let partial = jpeg.color.tag(DecodedImage(
            width: width, height: height, pixels: pixels, format: .jpeg,
            orientation: header.orientation, isIncomplete: true))
        return JPEGDecompressor.exactTarget(partial, header: header, options: options)
    }

    private func advance(_ jpeg: JPEGDecompressor, isFinal: Bool) throws {
        if header == nil {
            guard let parsed = try jpeg.readHeader() else { return }
            try options.checkDimensions(width: parsed.width, height: parsed.height)
            jpeg.configureColor(parsed, options: options)
            let size = try jpeg.configure(scaleDenominator: JPEGDecompressor.scaleDenominator(
                width: parsed.width, height: parsed.height, options: options))
            jpeg.fuseColorConversion(header: parsed, outputSize: size, options: options)
            width = size.width
            height = size.height
            header = parsed
            headerBytes = nil
        }
        guard let header else { return }
        if header.isArithmetic && !isFinal { return }
        if !started {
            try jpeg.start()
            let count = width * height * 4
            pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                cic_jpeg_advise_output(base, count)  // before the zero fill touches the pages
                base.initialize(repeating: 0, count: count)
                initialized = count
            }
            started = true
        }
        let finished = try pixels.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { throw ImageDecodingError.zeroPixels }
            return try jpeg.decode(into: base)
        }
        if finished {
            finalImage = JPEGDecompressor.exactTarget(
                jpeg.color.tag(DecodedImage(
                    width: width, height: height, pixels: pixels, format: .jpeg,
                    orientation: header.orientation, isIncomplete: jpeg.progress.incomplete != 0)),
                header: header, options: options)
            release()
        } else if isFinal {
            // A final source never suspends; reaching this would be a libjpeg surprise, reported cleanly.
            throw ImageDecodingError.truncated
        }
    }

    private func finishLossless(_ bytes: Data) throws {
        finalImage = try LosslessJPEGDecoder(options: options).decode(bytes)
        losslessBytes = nil
    }

    private func fail(_ error: any Error) {
        failure = error
        release()
    }

    private func release() {
        jpeg = nil
        pixels = []
        headerBytes = nil
        losslessBytes = nil
    }
}

import CImageCodecs
import Foundation

/// One libjpeg-turbo decompression driven step by step (header, configure, start, decode).
///
/// The one-shot and the incremental path both run through this type, so the same bytes end in the same
/// libjpeg state and the same pixels. Failures become `ImageDecodingError`; libjpeg's longjmp never leaves C.
final class JPEGDecompressor {
    /// What the frame header says, plus the EXIF orientation from APP1.
    struct Header {
        let width: Int
        let height: Int
        let isCMYK: Bool
        /// Progressive or multi-scan sequential: decoded in buffered-image mode.
        let isMultiScan: Bool
        /// Arithmetic-coded: libjpeg cannot suspend inside its scans.
        let isArithmetic: Bool
        let orientation: ImageOrientation
        /// The ICC profile from the APP2 chunks.
        let iccProfile: Data?
        /// An Adobe APP14 marker: CMYK samples come inverted.
        let isAdobeInverted: Bool
    }

    /// The colour fields every image of this decode carries (`configureColor`).
    struct Color {
        var iccProfile: Data?
        var state: ImageColorState = .sRGB
        var source: ColorSource?

        /// `image` with these fields.
        func tag(_ image: DecodedImage) -> DecodedImage {
            var tagged = image
            tagged.iccProfile = iccProfile
            tagged.colorState = state
            tagged.colorSource = source
            return tagged
        }
    }

    private let handle: OpaquePointer
    private var lastHeader = cic_jpeg_header()
    private(set) var header: Header?
    private(set) var color = Color()
    /// Kept alive while libjpeg's rows go through them.
    private var cmykTransform: ColorTransform?
    private var rowTransform: AnyObject?

    init(maximumPixelCount: Int) throws {
        guard let handle = cic_jpeg_decoder_create(UInt64(max(0, maximumPixelCount))) else {
            throw ImageDecodingError.corrupt("out of memory creating the JPEG decoder")
        }
        self.handle = handle
    }

    deinit { cic_jpeg_decoder_destroy(handle) }

    /// Copies the next bytes behind the ones libjpeg has not consumed yet.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard cic_jpeg_decoder_append(handle, base.assumingMemoryBound(to: UInt8.self), bytes.count) != 0 else {
            throw ImageDecodingError.corrupt("out of memory buffering JPEG data")
        }
    }

    /// One-shot input, used in place: `bytes` must outlive every later call on this decompressor.
    func setBorrowedInput(_ bytes: UnsafeRawBufferPointer) {
        cic_jpeg_decoder_set_borrowed_input(handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// No more bytes: the end of data now reads as EOI (a truncated file decodes as far as it goes).
    func setFinal() { cic_jpeg_decoder_set_final(handle) }

    /// The header, or `nil` while more bytes are needed.
    func readHeader() throws -> Header? {
        if let header { return header }
        let status = cic_jpeg_decoder_read_header(handle, &lastHeader)
        if status == CIC_JPEG_SUSPENDED { return nil }
        try check(status)
        var length = 0
        var orientation = ImageOrientation.up
        if let exif = cic_jpeg_decoder_exif(handle, &length) {
            orientation = EXIFOrientation.parse(UnsafeBufferPointer(start: exif, count: length)) ?? .up
        }
        var iccLength = 0
        let icc = cic_jpeg_decoder_icc(handle, &iccLength).map { Data(bytes: $0, count: iccLength) }
        let parsed = Header(
            width: Int(lastHeader.width), height: Int(lastHeader.height), isCMYK: lastHeader.is_cmyk != 0,
            isMultiScan: lastHeader.multi_scan != 0, isArithmetic: lastHeader.arithmetic != 0,
            orientation: orientation, iccProfile: icc, isAdobeInverted: lastHeader.adobe_inverted != 0)
        header = parsed
        return parsed
    }

    /// Decides the colour handling after the header: a CMYK image with a profile converts its rows through
    /// lcms2 as libjpeg writes them (so partial images and thumbnails are converted too); RGB and gray
    /// profiles are left to `ColorManagement` after scaling.
    func configureColor(_ header: Header, options: ImageDecodingOptions) {
        guard let profile = header.iccProfile else { return }
        guard header.isCMYK else {
            color = Color(iccProfile: profile, state: .awaitingConversion)
            return
        }
        let naive = "CMYK converted without its profile"
        guard options.colorManagement == .convertToSRGB else {
            color = Color(iccProfile: profile, state: .notConverted(reason: "kept as decoded (colorManagement: .keepOriginal); \(naive)"),
                          source: .settled)
            return
        }
        switch ColorManagement.cmykTransform(profile: profile, inverted: header.isAdobeInverted) {
        case .transform(let transform):
            cmykTransform = transform
            cic_jpeg_decoder_set_cmyk_transform(handle, transform.api, transform.handle)
            color = Color(state: .convertedToSRGB(from: transform.description))
        case .failure(let reason):
            color = Color(iccProfile: profile, state: .notConverted(reason: "\(reason); \(naive)"), source: .settled)
        case .identity, .matrix:
            break  // not for CMYK keys
        }
    }

    /// After `configure`: RGB and gray rows are converted to sRGB in the shim as libjpeg writes them (in cache,
    /// and each row once for baseline previews), unless the image is resized afterwards (`exactTarget`): then
    /// `ColorManagement` converts the smaller result, as conversion always follows shrinking.
    func fuseColorConversion(header: Header, outputSize: (width: Int, height: Int), options: ImageDecodingOptions) {
        guard options.coderConvertsColor, options.colorManagement == .convertToSRGB, !header.isCMYK, let profile = color.iccProfile,
              color.state == .awaitingConversion else { return }
        if let target = ImageScaler.targetSize(width: header.width, height: header.height, options: ImageScaler.finishing(options)),
           target != outputSize { return }
        switch ColorManagement.transform(for: .icc(profile, cmyk: nil)) {
        case .identity:
            color = Color(state: .sRGB)
        case .matrix(let transform):
            rowTransform = transform
            cic_jpeg_decoder_set_row_transform(handle, transform.cHandle, nil, nil)
            color = Color(state: .convertedToSRGB(from: transform.description))
        case .transform(let transform):
            rowTransform = transform
            cic_jpeg_decoder_set_row_transform(handle, nil, transform.api, transform.handle)
            color = Color(state: .convertedToSRGB(from: transform.description))
        case .failure:
            break  // the manager reports why
        }
    }

    /// Sets the DCT scale (1, 2, 4 or 8) and returns the size libjpeg will output.
    func configure(scaleDenominator: Int) throws -> (width: Int, height: Int) {
        var width: Int32 = 0
        var height: Int32 = 0
        try check(cic_jpeg_decoder_configure(handle, Int32(scaleDenominator), &width, &height))
        return (Int(width), Int(height))
    }

    /// Allocates libjpeg's decompression state; call once, after `configure`.
    func start() throws {
        try check(cic_jpeg_decoder_start(handle))
    }

    /// Decodes as far as the input allows into `pixels` (the configured size, RGBA8; keep its contents
    /// between calls). Returns true once the image is finished.
    func decode(into pixels: UnsafeMutablePointer<UInt8>) throws -> Bool {
        let status = cic_jpeg_decoder_decode(handle, pixels)
        if status == CIC_JPEG_SUSPENDED { return false }
        try check(status)
        return true
    }

    /// Multi-scan images: writes an output pass of the newest completed scan, if there is a new one.
    /// Returns true when `pixels` changed.
    func renderPreview(into pixels: UnsafeMutablePointer<UInt8>) throws -> Bool {
        let status = cic_jpeg_decoder_render_preview(handle, pixels)
        if status == CIC_JPEG_SUSPENDED { return false }
        try check(status)
        return true
    }

    var progress: cic_jpeg_progress { cic_jpeg_decoder_progress(handle) }

    /// The largest DCT scale denominator whose output still covers the size `options` asks for, so the
    /// area filter that follows only ever shrinks.
    static func scaleDenominator(width: Int, height: Int, options: ImageDecodingOptions) -> Int {
        guard let target = ImageScaler.targetSize(width: width, height: height, options: options) else { return 1 }
        for denominator in [8, 4, 2] {
            let scaledWidth = (width + denominator - 1) / denominator
            let scaledHeight = (height + denominator - 1) / denominator
            if scaledWidth >= target.width && scaledHeight >= target.height { return denominator }
        }
        return 1
    }

    /// Finishes a DCT-scaled decode at exactly the size `options` asks for the ORIGINAL dimensions, so a
    /// thumbnail is the same size whether or not libjpeg pre-shrank it (the manager only sees the pre-shrunk
    /// size and could otherwise round one pixel differently).
    static func exactTarget(_ image: DecodedImage, header: Header, options: ImageDecodingOptions) -> DecodedImage {
        guard let target = ImageScaler.targetSize(width: header.width, height: header.height, options: ImageScaler.finishing(options)),
              target.width != image.width || target.height != image.height else { return image }
        return ImageScaler.resize(image, width: target.width, height: target.height)
    }

    /// A frame type the linked libjpeg refused at its SOF marker: arithmetic-coded lossless JPEG (SOF11) before
    /// libjpeg-turbo 3.0, or a hierarchical one, which libjpeg-turbo never decodes. The refusal itself is the
    /// run-time capability check: a libjpeg-turbo 3.0+ at run time decodes lossless JPEG and never gets here.
    /// (Huffman-coded lossless, SOF3, refused by libjpeg, goes to `LosslessJPEGDecoder` instead.)
    static func unsupportedProcess(marker: Int) -> UnsupportedImageFeature {
        let sof = "SOF\(marker - 0xC0)"
        switch marker {
        case 0xC3, 0xCB:
            return UnsupportedImageFeature(
                format: .jpeg, feature: "lossless JPEG (\(sof))",
                requirement: "libjpeg-turbo 3.0 or later (this build links \(CodecLibraries.jpeg))")
        case 0xC8:
            return UnsupportedImageFeature(format: .jpeg, feature: "JPEG extension frame (JPG marker)",
                                           requirement: "a decoder for the reserved JPEG extensions (libjpeg-turbo has none)")
        default:
            return UnsupportedImageFeature(
                format: .jpeg, feature: "hierarchical or differential JPEG (\(sof))",
                requirement: "a JPEG decoder with hierarchical mode (libjpeg-turbo has none)")
        }
    }

    private func check(_ status: cic_jpeg_status) throws {
        guard status == CIC_JPEG_ERROR else { return }
        let message = String(cString: cic_jpeg_decoder_error(handle))
        let width = Int(lastHeader.width), height = Int(lastHeader.height)
        switch cic_jpeg_decoder_failure(handle) {
        case CIC_JPEG_FAIL_TRUNCATED:
            throw ImageDecodingError.truncated
        case CIC_JPEG_FAIL_TOO_LARGE:
            throw ImageDecodingError.tooLarge(width: width, height: height)
        case CIC_JPEG_FAIL_ZERO_PIXELS:
            throw ImageDecodingError.zeroPixels
        case CIC_JPEG_FAIL_MEMORY where width > 0 && height > 0:
            // libjpeg's memory cap (derived from the pixel limit) refused its buffers.
            throw ImageDecodingError.tooLarge(width: width, height: height)
        case CIC_JPEG_FAIL_UNSUPPORTED_PROCESS:
            let marker = Int(cic_jpeg_decoder_unsupported_sof(handle))
            // Huffman-coded lossless: the package decodes it itself (LosslessJPEGDecoder).
            if marker == 0xC3 { throw LosslessJPEGRefused() }
            throw Self.unsupportedProcess(marker: marker)
        default:
            throw ImageDecodingError.corrupt(message.isEmpty ? "JPEG decoding failed" : message)
        }
    }
}

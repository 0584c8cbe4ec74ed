import CImageCodecs

/// One libpng progressive reader producing RGBA8 into a canvas owned here.
///
/// The canvas is allocated by `prepareCanvas` once the caller has read IHDR and checked its dimensions,
/// before libpng sees the header, so libpng never allocates image memory itself. Feeding the same bytes
/// in any pieces produces the same canvas.
final class PNGStreamDecoder {
    private let handle: OpaquePointer
    /// RGBA8 rows combined so far; zero (transparent) where nothing was decoded yet.
    private(set) var canvas: [UInt8] = []
    private(set) var width = 0
    private(set) var height = 0

    /// `nil` when libpng cannot allocate its structures.
    init?(maximumPixelCount: Int, trustedStream: Bool = false) {
        guard let handle = cic_png_decoder_create(UInt64(max(0, maximumPixelCount)), trustedStream ? 1 : 0) else {
            return nil
        }
        self.handle = handle
    }

    deinit { cic_png_decoder_destroy(handle) }

    /// Allocates the zeroed canvas for a `width`×`height` image (already checked against the pixel limit).
    func prepareCanvas(width: Int, height: Int) {
        guard canvas.isEmpty else { return }
        self.width = width
        self.height = height
        canvas = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// Feeds bytes to libpng; throws the decoder's error once libpng has failed.
    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let data = base.assumingMemoryBound(to: UInt8.self)
        let status: cic_png_status
        if canvas.isEmpty {
            status = cic_png_decoder_feed(handle, data, bytes.count, nil, 0)
        } else {
            status = canvas.withUnsafeMutableBufferPointer { c in
                cic_png_decoder_feed(handle, data, bytes.count, c.baseAddress, c.count)
            }
        }
        if status == CIC_PNG_FAILED { throw error }
    }

    var progress: cic_png_progress {
        var p = cic_png_progress()
        cic_png_decoder_get_progress(handle, &p)
        return p
    }

    /// IEND was reached.
    var isFinished: Bool { progress.finished != 0 }

    /// At least one row of pixels is in the canvas.
    var hasRows: Bool { progress.any_rows != 0 }

    /// Hands over the canvas (the decoder keeps an empty one).
    func takeCanvas() -> [UInt8] {
        defer { canvas = [] }
        return canvas
    }

    /// What libpng reported, as the package's error.
    var error: ImageDecodingError {
        let message = String(cString: cic_png_decoder_message(handle))
        switch cic_png_decoder_error_kind(handle) {
        case CIC_PNG_ERROR_TOO_LARGE:
            let p = progress
            return .tooLarge(width: Int(p.width), height: Int(p.height))
        default:
            return .corrupt(message.isEmpty ? "libpng error" : message)
        }
    }
}

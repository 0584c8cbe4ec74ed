import CImageCodecs
import Foundation

/// HEIF, HEIC and AVIF through the system's libheif (`libheif.so.1`, with its HEVC/AV1 decoder plugins),
/// loaded with `dlopen` on first use.
///
/// Decodes the primary image to RGBA8 (HDR content reduced to 8 bits). Orientation: libheif applies the
/// file's `irot`/`imir` transformations while decoding (its default, as HEIF requires), so the pixels are
/// already upright and `orientation` is always `.up`; the EXIF orientation inside HEIF files must be
/// ignored for the same reason. Image sequences (`.heics`) decode only when they also carry a primary
/// image. Not incremental: HEIF needs the whole file, so the codec manager buffers it.
///
/// Without libheif the coder still claims HEIF-family data, so the failure is explicit: `decode` throws
/// `.unsupportedFormat` and `unavailableReason` says why.
public struct HEIFCoder: ImageCoder {
    private let soname: String

    /// The coder for the system libheif.
    public init() {
        self.init(soname: LibHeif.defaultSoname)
    }

    /// A coder loading libheif from `soname` (tests name a missing one to check the fallback).
    init(soname: String) {
        self.soname = soname
    }

    /// Why libheif cannot be used (not installed, or a symbol missing), or nil when it can.
    public var unavailableReason: String? {
        LibHeif.unavailableReason(soname)
    }

    /// The loaded library's version, e.g. "libheif 1.15.1", or nil when it is unavailable.
    public var libraryVersion: String? {
        LibHeif.versionString(soname)
    }

    public func canDecode(_ data: Data) -> Bool {
        [.heic, .heif, .avif].contains(ImageFormat(sniffing: data))
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let lib = try LibHeif.loadForDecoding(soname)
        let format = ImageFormat(sniffing: data)
        do {
            return try decode(data, lib: lib, format: format, options: options)
        } catch ImageDecodingError.unsupportedFormat where format == .avif {
            // An AVIF image sequence ("avis") whose ftyp lists no still-image brand: libheif (before 1.19) refuses
            // the file type even when a primary image is there. Its brands, rewritten in place (same size, so no
            // offset moves), let libheif decode that primary image.
            guard let still = AVIFSequenceBrands.stillImageCompatible(data) else {
                throw ImageDecodingError.corrupt(
                    "AVIF image sequence without a still primary image: \(libraryVersion ?? "libheif") decodes only still images")
            }
            do {
                return try decode(still, lib: lib, format: format, options: options)
            } catch ImageDecodingError.unsupportedFormat {
                throw ImageDecodingError.corrupt(
                    "AVIF image sequence: \(libraryVersion ?? "libheif") cannot decode its primary image")
            } catch ImageDecodingError.corrupt(let why) {
                throw ImageDecodingError.corrupt("AVIF image sequence: \(why)")
            }
        }
    }

    private func decode(_ data: Data, lib: LibHeif, format: ImageFormat, options: ImageDecodingOptions) throws -> DecodedImage {
        try data.withUnsafeBytes { bytes -> DecodedImage in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { throw ImageDecodingError.truncated }
            var status = cic_heif_status()
            var width: Int32 = 0, height: Int32 = 0
            // `bytes` outlives `file`: libheif reads them in place.
            guard let file = cic_heif_open(lib.api, base, bytes.count, &width, &height, &status) else {
                throw Self.error(status, dataEndsInsideABox: Self.endsInsideABox(bytes))
            }
            defer { cic_heif_close(file) }
            try options.checkDimensions(width: Int(width), height: Int(height))
            guard cic_heif_decode(file, &width, &height, &status) == 0 else {
                throw Self.error(status, dataEndsInsideABox: Self.endsInsideABox(bytes))
            }
            // The decoded size can differ from the header's (clean-aperture crop): check it as well.
            try options.checkDimensions(width: Int(width), height: Int(height))
            let w = Int(width), h = Int(height)
            var pixels = [UInt8](repeating: 0, count: w * h * 4)
            let copied = pixels.withUnsafeMutableBufferPointer { cic_heif_copy_rgba(file, $0.baseAddress, $0.count) }
            guard copied == 0 else { throw ImageDecodingError.corrupt("libheif returned an unexpected pixel layout") }
            var image = DecodedImage(width: w, height: h, pixels: pixels, format: format == .undefined ? .heif : format)
            let iccSize = cic_heif_icc_size(file)
            if iccSize > 0, iccSize <= 16 << 20 {
                var icc = [UInt8](repeating: 0, count: iccSize)
                if icc.withUnsafeMutableBufferPointer({ cic_heif_copy_icc(file, $0.baseAddress, $0.count) }) == 0 {
                    image.iccProfile = Data(icc)
                    image.colorState = .awaitingConversion
                }
            }
            if image.iccProfile == nil {
                var primaries: Int32 = 0, transfer: Int32 = 0
                if cic_heif_nclx(file, &primaries, &transfer) == 0 {
                    Self.tag(&image, with: NCLXColor(primaries: Int(primaries), transfer: Int(transfer)))
                }
            }
            return image
        }
    }

    /// Records what an nclx colour description asks of the pixels; `ImageCodersManager` converts them.
    static func tag(_ image: inout DecodedImage, with nclx: NCLXColor) {
        switch nclx.meaning {
        case .sRGB:
            break
        case .source(let source):
            image.colorSource = source
            image.colorState = .awaitingConversion
        case .notConverted(let reason):
            image.colorSource = .settled  // nothing colour management can do
            image.colorState = .notConverted(reason: reason)
        }
    }

    /// Maps libheif's error codes: end of data, or invalid input in a file whose last box is cut short →
    /// `.truncated`; a codec or file type libheif cannot handle → `.unsupportedFormat`; anything else →
    /// `.corrupt` with libheif's message.
    static func error(_ status: cic_heif_status, dataEndsInsideABox: Bool) -> ImageDecodingError {
        let message = withUnsafeBytes(of: status.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        switch (status.code, status.subcode) {
        case (Int32(CIC_HEIF_INVALID_INPUT), Int32(CIC_HEIF_SUB_END_OF_DATA)):
            return .truncated
        case (Int32(CIC_HEIF_INVALID_INPUT), _) where dataEndsInsideABox:
            // libheif reports a download cut short as a missing box ("No 'meta' box") or a bad size.
            return .truncated
        case (Int32(CIC_HEIF_UNSUPPORTED_FILETYPE), _), (Int32(CIC_HEIF_UNSUPPORTED_FEATURE), Int32(CIC_HEIF_SUB_UNSUPPORTED_CODEC)):
            return .unsupportedFormat
        default:
            return .corrupt("libheif: \(message.isEmpty ? "error \(status.code)/\(status.subcode)" : message)")
        }
    }

    /// Whether the top-level ISOBMFF boxes run past the end of `bytes`: the file was cut short.
    static func endsInsideABox(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {  // each step advances by at least 8 bytes, or returns
            guard bytes.count - offset >= 8 else { return true }
            var size = 0
            for i in 0..<4 { size = size << 8 | Int(bytes[offset + i]) }
            if size == 1 {  // 64-bit "largesize" follows the type
                guard bytes.count - offset >= 16 else { return true }
                var large: UInt64 = 0
                for i in 8..<16 { large = large << 8 | UInt64(bytes[offset + i]) }
                guard large >= 16, large <= UInt64(Int.max) else { return false }
                size = Int(large)
            } else if size == 0 {
                return false  // box extends to the end of the file
            }
            guard size >= 8 else { return false }  // malformed, not truncated
            if size > bytes.count - offset { return true }
            offset += size
        }
        return false
    }
}

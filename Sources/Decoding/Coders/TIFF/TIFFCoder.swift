import CImageCodecs
import Foundation

/// TIFF through the system's libtiff (`libtiff.so.6`), loaded with `dlopen` on first use.
///
/// Reads the first image (directory) with libtiff's RGBA interface, which handles every photometric
/// interpretation, compression and the 1/2/4/8-bit depths libtiff supports; the layouts it refuses or converts
/// differently from Pillow (integer samples of other depths such as 12, 16 and 32 bits, signed and float
/// samples, CMYK at any depth) are read as samples and converted by the C shim, and CIELab through lcms2
/// (`TIFFLabConversion`; libtiff's own approximation when lcms2 is missing). Docs/Decoding.md gives the rules.
/// The Orientation tag (274) is reported in
/// `orientation` and not applied: rows come out top-down in stored order (Pillow, by contrast, transposes
/// TIFFs by their tag while loading; applying `orientation` to these pixels gives its result). A file
/// whose later strips or tiles are damaged or missing decodes to a partial image (`isIncomplete`), the
/// unreadable parts filled as libtiff leaves them. Not incremental: TIFF directories may sit at the end of the file.
///
/// Without libtiff the coder still claims TIFF data, so the failure is explicit: `decode` throws
/// `.unsupportedFormat` and `unavailableReason` says why.
public struct TIFFCoder: ImageCoder {
    private let soname: String
    let labSoname: String

    /// The coder for the system libtiff.
    public init() {
        self.init(soname: LibTIFF.defaultSoname)
    }

    /// A coder loading libtiff from `soname` and lcms2 (for CIELab images) from `labSoname` (tests name a
    /// missing one to check the fallback).
    init(soname: String, labSoname: String = TIFFLabConversion.defaultSoname) {
        self.soname = soname
        self.labSoname = labSoname
    }

    /// Why libtiff cannot be used (not installed, too old, or a symbol missing), or nil when it can.
    public var unavailableReason: String? {
        LibTIFF.unavailableReason(soname)
    }

    /// The loaded library's version, e.g. "LIBTIFF, Version 4.5.0", or nil when it is unavailable.
    public var libraryVersion: String? {
        LibTIFF.versionString(soname)
    }

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .tiff
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        let lib = try LibTIFF.loadForDecoding(soname)
        guard data.count >= 8 else { throw ImageDecodingError.truncated }
        return try data.withUnsafeBytes { bytes -> DecodedImage in
            guard let base = bytes.baseAddress else { throw ImageDecodingError.truncated }
            var message = [CChar](repeating: 0, count: 256)
            var width: UInt32 = 0, height: UInt32 = 0
            var orientationTag: Int32 = 1
            // libtiff's own buffers (strips, tiles) are capped near the largest image the options allow.
            let maxAlloc = max(64 << 20, min(options.maximumPixelCount, Int.max / 8) * 8)
            guard let file = cic_tiff_open(lib.api, base, bytes.count, maxAlloc, &width, &height, &orientationTag,
                                           &message, message.count) else {
                throw Self.readError(stringFromCBuffer(message), firstDirectoryMissing: Self.firstDirectoryOffset(bytes) >= bytes.count)
            }
            defer { cic_tiff_close(file) }
            let w = Int(width), h = Int(height)
            try options.checkDimensions(width: w, height: h)
            let orientation = ImageOrientation(rawValue: Int(orientationTag)) ?? .up
            if cic_tiff_is_lab(file) != 0 {
                if let image = try decodeLab(file, width: width, height: height, orientation: orientation) { return image }
            }
            var iccLength = 0
            let icc = cic_tiff_icc(file, &iccLength).map { Data(bytes: $0, count: iccLength) }
            let isCMYK = cic_tiff_is_cmyk(file) != 0
            var cmykProfileUnused: String?
            if isCMYK, let icc {
                switch decodeCMYK(file, profile: icc, width: width, height: height, orientation: orientation, options: options) {
                case .decoded(let image): return image
                case .failed(let error): throw error
                case .notApplied(let why): cmykProfileUnused = why
                }
            }
            var raster = [UInt32](repeating: 0, count: w * h)
            let result = raster.withUnsafeMutableBufferPointer {
                cic_tiff_read_rgba(file, $0.baseAddress, width, height, &message, message.count)
            }
            guard result >= 0 else { throw Self.readError(stringFromCBuffer(message), firstDirectoryMissing: false) }
            let pixels = raster.withUnsafeBytes { [UInt8]($0) }
            if cic_tiff_is_lab(file) != 0 {
                // lcms2 is missing (or the layout is one it does not read): libtiff converted with its own model.
                let why = TIFFLabConversion.unavailableReason(labSoname) ?? "a CIELab layout lcms2 is not used for"
                return DecodedImage(width: w, height: h, pixels: pixels, format: .tiff, orientation: orientation,
                                    isIncomplete: result == 1,
                                    colorState: .convertedToSRGB(from: "\(TIFFLabConversion.sourceDescription) by libtiff's approximation (\(why))"))
            }
            var image = DecodedImage(
                width: w, height: h, pixels: pixels, format: .tiff, orientation: orientation,
                isIncomplete: result == 1, iccProfile: icc,
                colorState: icc == nil ? .sRGB : .awaitingConversion)
            if isCMYK, icc != nil {
                // The inks were converted by the naive formula: the CMYK profile no longer describes the pixels.
                image.colorState = .notConverted(reason: "\(cmykProfileUnused ?? "CMYK profile not applied"); CMYK converted without its profile")
                image.colorSource = .settled
            }
            return image
        }
    }

    /// libtiff only explains a failure in words; a first directory beyond the data, or running out of
    /// bytes, reads as truncation (TIFF writers often put the directory after the pixels).
    static func readError(_ message: String, firstDirectoryMissing: Bool) -> ImageDecodingError {
        let lowered = message.lowercased()
        let truncationHints = ["can not read", "cannot read", "read error", "eof", "not enough data", "past end", "end of file"]
        if firstDirectoryMissing || truncationHints.contains(where: lowered.contains) { return .truncated }
        return .corrupt("libtiff: \(message.isEmpty ? "cannot open" : message)")
    }

    /// The first IFD offset from the header: 4 bytes at 4 in classic TIFF, 8 bytes at 8 in BigTIFF
    /// (0, i.e. not judged here, when the header is too short to say).
    private static func firstDirectoryOffset(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count >= 8 else { return 0 }
        let little = bytes[0] == 0x49
        let version = little ? bytes[2] : bytes[3]
        let (start, width) = version == 43 ? (8, 8) : (4, 4)
        guard version == 42 || version == 43, bytes.count >= start + width else { return 0 }
        var value: UInt64 = 0
        for i in 0..<width { value |= UInt64(bytes[start + i]) << UInt64(little ? 8 * i : 8 * (width - 1 - i)) }
        return value > UInt64(Int.max) ? Int.max : Int(value)
    }
}

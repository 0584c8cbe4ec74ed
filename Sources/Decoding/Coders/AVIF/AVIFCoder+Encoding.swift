import CImageCodecs
import Foundation

extension AVIFCoder: ConfigurableImageEncoder {
    /// libavif's encoder speed (0 slowest ... 10 fastest): 6 is avifenc's default.
    static let encoderSpeed: Int32 = 6

    /// AVIF only. Claimed even without libavif or an AV1 encoder, so `encode` can say what is missing.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .avif
    }

    /// A still AVIF at `quality` (0...1), alpha kept.
    public func encode(_ image: DecodedImage, format: ImageFormat, quality: Double) throws -> Data {
        try encode(image, options: ImageEncodingOptions(format: format, quality: quality))
    }

    /// A still AVIF through libavif's AV1 encoder (aom, rav1e or SVT-AV1, whichever libavif has): 8-bit 4:2:0,
    /// tagged sRGB, `quality` as libavif 1.x maps 1...100 to the AV1 quantizer, alpha kept when any pixel is not
    /// opaque, no metadata. Throws `.libraryUnavailable` naming what to install when libavif, or an encoder in it,
    /// is missing.
    public func encode(_ image: DecodedImage, options: ImageEncodingOptions) throws -> Data {
        guard options.format == .avif else { throw ImageEncodingError.unsupportedFormat(options.format) }
        let lib: LibAVIF
        switch LibAVIF.load(firstOf: sonames) {
        case .success(let loaded): lib = loaded
        case .failure(let why): throw ImageEncodingError.libraryUnavailable("AVIF encoding needs libavif (\(why)); install libavif15")
        }
        guard lib.encoderName != nil else {
            throw ImageEncodingError.libraryUnavailable(
                "\(lib.versionString) has no AV1 encoder: AVIF encoding needs a libavif built with aom, rav1e or SVT-AV1")
        }
        let prepared = try options.prepared(image, flatten: false)
        let hasAlpha = prepared.pixels.withUnsafeBufferPointer { p in stride(from: 3, to: p.count, by: 4).contains { p[$0] != 255 } }
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var status = cic_avif_status()
        let result = prepared.pixels.withUnsafeBufferPointer { p in
            cic_avif_encode(lib.api, p.baseAddress, Int32(prepared.width), Int32(prepared.height), hasAlpha ? 1 : 0,
                            Int32(options.qualityPercent), Self.encoderSpeed, &output, &size, &status)
        }
        guard result == 0, let output else {
            throw ImageEncodingError.failed("libavif: \(AVIFFailure(status).message)")
        }
        defer { cic_avif_free(output) }
        return Data(bytes: output, count: size)
    }

    /// Why AVIF encoding is unavailable (libavif missing, or built without an AV1 encoder), or nil.
    public var encoderUnavailableReason: String? {
        switch LibAVIF.load(firstOf: sonames) {
        case .failure(let why): return why.description
        case .success(let lib): return lib.encoderName == nil ? "\(lib.versionString) has no AV1 encoder" : nil
        }
    }
}

import Foundation

/// AVIF through the system's libavif (`libavif.so.16` or `libavif.so.15`, with dav1d or libaom), loaded with
/// `dlopen` on first use; libheif stays the fallback.
///
/// Still images and image sequences: a sequence decodes to its first frame (the poster) plus an `AnimatedImage`
/// whose frames libavif decodes on demand from the nearest AV1 key frame, with the track's durations and the edit
/// list's loop count. The file's clean aperture, rotation and mirroring (clap, irot, imir) are applied to the
/// pixels, so `orientation` is `.up`; alpha auxiliary images are applied (premultiplied ones un-premultiplied);
/// 10- and 12-bit samples are rounded to 8 bits by libavif; grids are assembled and layered images show their
/// selected (or final) layer. Colour: the colr ICC profile, else the nclx code points, as `HEIFCoder` records
/// them. Not incremental: the codec manager buffers the file.
///
/// When libavif is absent, refuses its version, or refuses a file (say, one with two `ipma` boxes, which libavif
/// rejects in every mode), the file goes to `HEIFCoder` (libheif). Truncation and the decode limits are final.
public struct AVIFCoder: ImageCoder {
    let sonames: [String]
    let fallback: HEIFCoder

    /// The coder for the system libavif, with the system libheif as its fallback.
    public init() {
        self.init(sonames: LibAVIF.defaultSonames, fallback: HEIFCoder())
    }

    /// A coder loading libavif from `sonames` (tests name missing ones to check the fallback).
    init(sonames: [String], fallback: HEIFCoder) {
        self.sonames = sonames
        self.fallback = fallback
    }

    /// Why libavif cannot be used (not installed, a symbol missing, or a version whose structures the shim was
    /// not written against), or nil when it can.
    public var unavailableReason: String? {
        if case .failure(let why) = LibAVIF.load(firstOf: sonames) { return why.description }
        return nil
    }

    /// The loaded library's version and codecs, e.g. "libavif 0.11.1 (dav1d [dec]:1.0.0, aom [enc/dec]:v3.6.0)",
    /// or nil when it is unavailable.
    public var libraryVersion: String? {
        try? LibAVIF.load(firstOf: sonames).get().versionString
    }

    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .avif
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        guard case .success(let lib) = LibAVIF.load(firstOf: sonames) else {
            return try fallback.decode(data, options: options)
        }
        do {
            return try AVIFImageDecoding(lib: lib, options: options).decode(data)
        } catch let refusal as ImageDecodingError where Self.libheifMayTry(refusal) {
            do {
                return try fallback.decode(data, options: options)
            } catch let final as ImageDecodingError where !Self.libheifMayTry(final) {
                throw final  // a limit or truncation libheif found is the answer
            } catch {
                throw refusal  // libavif's reason, which names the problem in AVIF's terms
            }
        }
    }

    /// Whether libheif should get a file libavif failed on: a refusal of the file itself, not truncation, a
    /// limit or a cancelled wait.
    static func libheifMayTry(_ error: ImageDecodingError) -> Bool {
        switch error {
        case .corrupt, .unsupportedFormat: return true
        default: return false
        }
    }
}

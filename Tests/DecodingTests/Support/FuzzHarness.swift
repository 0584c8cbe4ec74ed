// The fuzz harness shared by the libFuzzer binary (Fuzz/Sources/DecodeFuzzer.swift; Fuzz/run.sh compiles this
// file into it) and FuzzRegressionTests, so a stored finding is replayed through exactly the calls that found it.
import Decoding
import Foundation

/// Kept small so that the fuzzer spends its time on parsing, not on filling huge pixel buffers.
let fuzzPixelLimit = 4_000_000

enum FuzzTarget: String, CaseIterable {
    case png, gif, bmp, ico, jpeg, webp, tiff, heif, avif, exif, sniff, any, icc

    var coder: (any ImageCoder)? {
        switch self {
        case .png: return PNGCoder()
        case .gif: return GIFCoder()
        case .bmp: return BMPCoder()
        case .ico: return ICOCoder()
        case .jpeg: return JPEGCoder()
        case .webp: return WebPCoder()
        case .tiff: return TIFFCoder()
        case .heif: return HEIFCoder()
        case .avif: return AVIFCoder()
        case .exif, .sniff, .any, .icc: return nil
        }
    }
}

/// FNV-1a of the input: drives the decode options and the chunk sizes, so every run of an input is the same.
func fuzzHash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    return hash
}

func fuzzOptions(_ hash: UInt64) -> ImageDecodingOptions {
    var options = ImageDecodingOptions()
    options.maximumPixelCount = fuzzPixelLimit
    options.decodeFirstFrameOnly = hash & 1 != 0
    if hash & 6 == 2 { options.thumbnailPixelSize = CGSize(width: 17, height: 13) }
    // Shrink-on-load to a tiny box: JPEGs of 64 px and more go through the DC-only 1/8 path.
    if hash & 6 == 4 { options.thumbnailPixelSize = CGSize(width: 8, height: 8); options.shrinkOnLoad = .fit }
    return options
}

/// Feeds `data` in chunks of 1...4096 bytes (sizes from `hash`), reading the partial image every 8th chunk.
func fuzzIncremental(_ decoder: any IncrementalImageDecoder, _ data: Data, _ hash: UInt64) {
    var state = hash | 1
    var offset = data.startIndex
    var chunks = 0
    while offset < data.endIndex {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        let size = Int(state % 4096) + 1
        let end = data.index(offset, offsetBy: size, limitedBy: data.endIndex) ?? data.endIndex
        do { try decoder.append(data[offset..<end], isFinal: false) } catch { return }
        // A partial image every 8th chunk, as a throttled downloader asks (every chunk makes big images quadratic).
        chunks += 1
        if chunks % 8 == 1 { _ = decoder.currentImage() }
        offset = end
    }
    do { try decoder.append(Data(), isFinal: true) } catch { return }
    _ = decoder.currentImage()
}

/// Runs one input through `target` and returns the harness's invariants it broke (empty: none). The fuzzer
/// traps on a broken invariant (a finding); the regression test records it as the failure of that one input.
/// A trap inside the code under test (overflow, bounds) is a finding too.
func fuzzOne(_ data: Data, hash: UInt64, target: FuzzTarget) -> [String] {
    let options = fuzzOptions(hash)
    switch target {
    case .exif:
        _ = EXIFOrientation.parse(data)
    case .sniff:
        _ = ImageFormat(sniffing: data)
    case .icc:
        return fuzzICCProfile(data, hash: hash)
    case .any:
        let manager = ImageCodersManager.shared
        _ = try? manager.decode(data, options: options)
        if let decoder = manager.incrementalDecoder(for: data, options: options) { fuzzIncremental(decoder, data, hash) }
    case .avif:
        // libavif's parse, the first frame and, for a sequence, a few more frames out of order (a second decoder
        // per seek); libheif when libavif refuses the file.
        guard let image = try? AVIFCoder().decode(data, options: options), let animation = image.animation else { return [] }
        for index in [animation.frameCount - 1, 1, 2] where index < animation.frameCount { _ = try? animation.frame(at: index) }
    default:
        guard let coder = target.coder else { return [] }
        _ = try? coder.decode(data, options: options)
        if let progressive = coder as? any ProgressiveImageCoder, progressive.canIncrementallyDecode(data) {
            fuzzIncremental(progressive.makeIncrementalDecoder(options: options), data, hash)
        }
    }
    return []
}

/// A hostile ICC profile on a small RGBA image: lcms2 must either convert or refuse, and the image must come
/// back the same size, with a reason when it is left unconverted.
func fuzzICCProfile(_ data: Data, hash: UInt64) -> [String] {
    let pixels = (0..<(16 * 8 * 4)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ Int(hash & 0xFF)) }
    var image = DecodedImage(width: 16, height: 8, pixels: pixels, format: .png, iccProfile: data)
    ColorManagement.convertToSRGB(&image)
    var broken: [String] = []
    if image.pixels.count != pixels.count { broken.append("colour management changed the pixel count") }
    if case .notConverted(let reason) = image.colorState, reason.isEmpty { broken.append("left unconverted without a reason") }
    return broken
}

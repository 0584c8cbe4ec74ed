// libFuzzer entry point for the Decoding module. Built by Fuzz/run.sh with `-sanitize=fuzzer,address`
// (never by SwiftPM: libFuzzer supplies `main`). One binary, one target per run, chosen with FUZZ_TARGET:
//
//   png gif bmp ico jpeg webp tiff heif   that coder alone: one-shot decode, then chunked incremental decode
//   exif                                  EXIFOrientation.parse (JPEG APP1 / PNG eXIf / TIFF block)
//   sniff                                 ImageFormat(sniffing:)
//   any                                   ImageCodersManager.shared, one-shot and incremental
//
// A crash, an ASan report, a Swift trap (overflow, bounds, force unwrap) or a hang is a finding. Thrown
// errors are the expected outcome for bad input.
import Decoding
import Foundation

/// Kept small so that the fuzzer spends its time on parsing, not on filling huge pixel buffers.
let fuzzPixelLimit = 4_000_000

enum FuzzTarget: String, CaseIterable {
    case png, gif, bmp, ico, jpeg, webp, tiff, heif, exif, sniff, any

    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "any"
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("unknown FUZZ_TARGET \(name); one of \(allCases.map(\.rawValue))\n".utf8))
            exit(2)
        }
        return target
    }()

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
        case .exif, .sniff, .any: return nil
        }
    }
}

/// FNV-1a of the input: drives the decode options and the chunk sizes, so every run of an input is the same.
func fuzzHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    return hash
}

func fuzzOptions(_ hash: UInt64) -> ImageDecodingOptions {
    var options = ImageDecodingOptions()
    options.maximumPixelCount = fuzzPixelLimit
    options.decodeFirstFrameOnly = hash & 1 != 0
    if hash & 6 == 2 { options.thumbnailPixelSize = CGSize(width: 17, height: 13) }
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

func fuzzOne(_ data: Data, hash: UInt64, target: FuzzTarget) {
    let options = fuzzOptions(hash)
    switch target {
    case .exif:
        _ = EXIFOrientation.parse(data)
    case .sniff:
        _ = ImageFormat(sniffing: data)
    case .any:
        let manager = ImageCodersManager.shared
        _ = try? manager.decode(data, options: options)
        if let decoder = manager.incrementalDecoder(for: data, options: options) { fuzzIncremental(decoder, data, hash) }
    default:
        guard let coder = target.coder else { return }
        _ = try? coder.decode(data, options: options)
        if let progressive = coder as? any ProgressiveImageCoder, progressive.canIncrementallyDecode(data) {
            fuzzIncremental(progressive.makeIncrementalDecoder(options: options), data, hash)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    fuzzOne(Data(bytes), hash: fuzzHash(bytes), target: FuzzTarget.selected)
    return 0
}

import CImageCodecs
import Foundation

/// One libavif decoder (the shim's `cic_avif_file`) over bytes that outlive it: parsed on creation, then frames
/// decoded and converted on request. Not thread-safe: one thread at a time (`AnimatedImage` serialises its
/// compositors; a still decode owns its file).
final class AVIFFile {
    /// What parsing found: sizes, depth, alpha, frames, colour, geometry.
    let info: cic_avif_info
    private let handle: OpaquePointer
    /// The stable copy the decoder reads, for files that outlive the caller's `Data` (sequences).
    private let owner: AVIFBytes?

    /// Parses `bytes`, which must stay valid while this file lives: `owner` keeps them alive, or the caller does
    /// (a still decode inside `withUnsafeBytes`). `maximumFrames` is libavif's own frame-count limit.
    init(lib: LibAVIF, bytes: UnsafeRawBufferPointer, owner: AVIFBytes?, maximumFrames: Int) throws(AVIFFailure) {
        var info = cic_avif_info()
        var status = cic_avif_status()
        let limit = UInt32(clamping: max(1, maximumFrames))
        guard let base = bytes.baseAddress, !bytes.isEmpty,
              let handle = cic_avif_open(lib.api, base, bytes.count, limit, &info, &status)
        else {
            throw bytes.isEmpty ? AVIFFailure(code: Int32(CIC_AVIF_TRUNCATED_DATA), message: "no data") : AVIFFailure(status)
        }
        self.handle = handle
        self.info = info
        self.owner = owner
    }

    deinit { cic_avif_close(handle) }

    /// The displayed size (after clap and irot).
    var width: Int { Int(info.width) }
    var height: Int { Int(info.height) }
    var frameCount: Int { Int(info.frame_count) }

    /// From now on libavif (and dav1d, its AV1 decoder) refuse frames of more pixels than this.
    func setPixelLimit(_ pixels: Int) {
        cic_avif_set_pixel_limit(handle, UInt32(clamping: pixels))
    }

    /// Seconds frame `index` is shown by the track's timing, or nil when libavif does not know it.
    func duration(at index: Int) -> Double? {
        let seconds = cic_avif_frame_duration(handle, Int32(clamping: index))
        return seconds >= 0 && seconds.isFinite ? seconds : nil
    }

    func isKeyFrame(_ index: Int) -> Bool {
        cic_avif_is_keyframe(handle, Int32(clamping: index)) != 0
    }

    /// Decodes frame `index`, seeking from the nearest key frame when it is not the next one.
    func decodeFrame(_ index: Int) throws(AVIFFailure) {
        var status = cic_avif_status()
        guard cic_avif_decode_frame(handle, Int32(clamping: index), &status) == 0 else { throw AVIFFailure(status) }
    }

    /// The decoded frame as RGBA8 of the displayed size, geometry applied, written straight into new storage.
    func rgba() throws(AVIFFailure) -> [UInt8] {
        var status = cic_avif_status()
        var failed = false
        let count = width * height * 4
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if cic_avif_copy_rgba(handle, buffer.baseAddress, buffer.count, &status) != 0 {
                buffer.initialize(repeating: 0)
                failed = true
            }
            initialized = buffer.count
        }
        if failed { throw AVIFFailure(status) }
        return pixels
    }

    /// The colr ICC profile, or nil without one (or one too large to be a profile).
    func iccProfile() -> Data? {
        let size = info.icc_size
        guard size > 0, size <= 16 << 20 else { return nil }
        var icc = [UInt8](repeating: 0, count: size)
        guard icc.withUnsafeMutableBufferPointer({ cic_avif_copy_icc(handle, $0.baseAddress, $0.count) }) == 0 else { return nil }
        return Data(icc)
    }
}

/// A libavif failure: its avifResult and message (avifResultToString and the decoder's diagnostics).
struct AVIFFailure: Error, Equatable {
    let code: Int32
    let message: String

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    init(_ status: cic_avif_status) {
        code = status.code
        message = withUnsafeBytes(of: status.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    var isTruncation: Bool { code == Int32(CIC_AVIF_TRUNCATED_DATA) }
    /// libavif's frame-count limit refused the file (its diagnostics name it, in 0.11 and 1.x alike).
    var exceededFrameLimit: Bool { message.contains("imageCountLimit") }

    /// The size libavif's own pixel limit refused while parsing, read from its diagnostics ("Item ID [1]
    /// dimensions are too large [60000x60000]", "Grid box dimensions are too large: [W x H]", in 0.11 and 1.x).
    var refusedSize: (width: Int, height: Int)? {
        guard let phrase = message.range(of: "dimensions are too large"),
              let open = message[phrase.upperBound...].firstIndex(of: "["),
              let close = message[open...].firstIndex(of: "]") else { return nil }
        let sides = message[message.index(after: open)..<close].filter { $0 != " " }.split(separator: "x")
        guard sides.count == 2, let width = Int(sides[0]), let height = Int(sides[1]) else { return nil }
        return (width, height)
    }
}

/// A copy of the file's bytes at a stable address, for libavif decoders that outlive one `withUnsafeBytes` call:
/// the compositors of a sequence. Immutable and shared.
final class AVIFBytes: @unchecked Sendable {  // immutable after init: the buffer is written once, then only read
    let buffer: UnsafeRawBufferPointer
    private let storage: UnsafeMutableRawBufferPointer

    init(_ data: Data) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
        _ = data.copyBytes(to: storage.bindMemory(to: UInt8.self))
        buffer = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[0..<data.count])
    }

    deinit { storage.deallocate() }

    var count: Int { buffer.count }
}
